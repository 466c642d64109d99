import { describe, expect, test } from 'vitest'
import { agentLogOf } from './fixtures.js'
import { renderInspectTable } from '../../src/cli/inspect.js'
import { renderReportHtml } from '../../src/cli/report-html.js'
import { agentModel, buildReport, sharedPrefix } from '../../src/cli/report-model.js'
import { configChanges, sectionChanges, toolChanges } from '../../src/cli/report-model.js'
import { agentNames } from '../../src/cli/run.js'
import { budgetLog, jsonl, messageLine, stepLine, threeStepLog, usageLine } from './fixtures.js'

const model = (text: string, file = 'a.jsonl') => agentModel(agentLogOf(text, file))

describe('per-step rows', () => {
  test('the stable share is the stable prefix over the prompt the model holds', () => {
    const rows = model(threeStepLog()).rows
    const v3 = 'You are Loom.\n\nPersona B.\n\nWeb UI.'
    expect(rows.map((row) => row.stableShare)).toEqual([0, 1, 'You are Loom.\n\nPersona '.length / v3.length])
  })

  test('sections are classified as added, removed and changed from the two steps\' section lists', () => {
    expect(model(threeStepLog()).rows[2]!.sections).toEqual({ changed: ['persona'], added: ['web'], removed: ['plan'], withheld: [], restored: [], classified: true })
  })

  test('without section lists every changed section stays "changed" and the row says it is unclassified', () => {
    expect(sectionChanges({ changedSections: ['plan'] }, {})).toEqual({ changed: ['plan'], added: [], removed: [], withheld: [], restored: [], classified: false })
  })

  test('a section that appears is "added" even when the writer did not list it as changed', () => {
    expect(sectionChanges({ changedSections: [], sections: ['a', 'b'] }, { sections: ['a'] }).added).toEqual(['b'])
  })

  test('tool changes come from the two header tool lists', () => {
    const row = model(threeStepLog()).rows[2]!
    expect([row.tools, row.config, row.headerReason]).toEqual([
      { added: ['browse'], removed: [], changed: [], reordered: false },
      ['temperature'],
      'tools changed (added browse); config changed',
    ])
  })

  test('a tool whose schema changed is "changed", and a swap of two tools is "reordered"', () => {
    const tool = (name: string, description = name) => ({ name, description, parameters: {} })
    expect(toolChanges([tool('a'), tool('b')], [tool('b'), tool('a', 'new')])).toEqual({ added: [], removed: [], changed: ['a'], reordered: true })
    expect(toolChanges([tool('a')], [tool('a')])).toBeUndefined()
  })

  test('config changes list added, removed and changed keys', () => {
    expect(configChanges({ model: 'a', top: 1 }, { model: 'b', seed: 2 })).toEqual(['model', 'top', 'seed'])
  })

  test('a usage record gives the observed share next to the predicted tokens', () => {
    const rows = model(jsonl(stepLine(1), messageLine('p', 'append'), stepLine(2, { stablePrefixLength: 1 }), usageLine(2, 200, 150, { predictedTokens: 160 }))).rows
    expect(rows[1]!.usage).toEqual({ inputTokens: 200, cachedInputTokens: 150, predictedTokens: 160, observedShare: 0.75 })
  })

  test('withheld and overBudget come from the step record, empty and false when absent', () => {
    const rows = model(jsonl(stepLine(1, { withheld: ['examples'], overBudget: true }), messageLine('p', 'append'), stepLine(2))).rows
    expect(rows.map((row) => [row.withheld, row.overBudget])).toEqual([
      [['examples'], true],
      [[], false],
    ])
  })
})

describe('sections the token budget withheld', () => {
  test('a newly withheld section is a change of its own, not a removal, and one sent again is restored, not added', () => {
    const rows = model(budgetLog()).rows
    expect(rows.map((row) => row.sections)).toEqual([
      { changed: [], added: ['identity', 'examples'], removed: [], withheld: [], restored: [], classified: true },
      { changed: [], added: ['tips'], removed: [], withheld: ['examples'], restored: [], classified: true },
      { changed: [], added: [], removed: [], withheld: [], restored: [], classified: true },
      { changed: [], added: [], removed: ['tips'], withheld: [], restored: ['examples'], classified: true },
    ])
    expect(rows.map((row) => row.withheld)).toEqual([[], ['examples'], ['examples'], []])
  })

  test('on the first step every withheld section is listed as withheld', () => {
    const rows = model(jsonl(stepLine(1, { sections: ['a'], withheld: ['b', 'c'] }), messageLine('A', 'append'))).rows
    expect(rows[0]!.sections.withheld).toEqual(['b', 'c'])
  })

  test('a withheld name that leaves the withheld set without being sent left the registry: neither restored nor removed', () => {
    const text = jsonl(stepLine(1, { sections: ['a'], withheld: ['b'] }), messageLine('A', 'append'), stepLine(2, { stablePrefixLength: 1, sections: ['a'], withheld: [] }))
    expect(model(text).rows[1]!.sections).toEqual({ changed: [], added: [], removed: [], withheld: [], restored: [], classified: true })
  })

  test('without section lists the withheld and restored names still come from the withheld lists', () => {
    expect(sectionChanges({ changedSections: ['b', 'c'], withheld: ['b'] }, { withheld: ['c'] })).toEqual({
      changed: [],
      added: [],
      removed: [],
      withheld: ['b'],
      restored: ['c'],
      classified: false,
    })
  })
})

describe('agent headline figures', () => {
  test('the mean stable share leaves out the first step', () => {
    const step3 = 'You are Loom.\n\nPersona '.length / 'You are Loom.\n\nPersona B.\n\nWeb UI.'.length
    expect(model(threeStepLog()).meanStableShare).toBeCloseTo((1 + step3) / 2, 10)
  })

  test('with only steps that start a session there is no mean: undefined, shown as a dash by inspect and the report', () => {
    const text = jsonl(stepLine(1), messageLine('hello'), stepLine(1), messageLine('hello'), stepLine(1), messageLine('hello'))
    expect([model(text).meanStableShare, model(text).meanReusableShare]).toEqual([undefined, undefined])
    expect(renderInspectTable(model(text)).split('\n')[0]).toMatch(/: 3 steps, mean stable prefix -, 0 warnings$/)
    const page = renderReportHtml(buildReport([agentLogOf(text, 'restarts.jsonl')]))
    expect(page).toContain('<dt>mean stable prefix</dt><dd>—</dd>')
    expect(page).not.toContain('mean reusable prefix')
  })

  test('the reusable mean is taken over the same steps (a log without reusable figures reuses its stable ones)', () => {
    const text = jsonl(stepLine(1), messageLine('abcd', 'append'), stepLine(2, { stablePrefixLength: 4, reusablePrefixLength: 2 }), stepLine(3, { stablePrefixLength: 4 }))
    expect(model(text).meanReusableShare).toBe(0.75)
  })

  test('usage totals add up the steps that have usage', () => {
    const text = jsonl(stepLine(1), usageLine(1, 100, 0), stepLine(2), stepLine(3), usageLine(3, 100, 90, { predictedTokens: 95 }))
    expect(model(text).usageTotals).toEqual({ steps: 2, inputTokens: 200, cachedInputTokens: 90, predictedTokens: 95 })
  })
})

describe('the prefix the agents share', () => {
  test('is the longest common prefix of their latest prompts, with each agent\'s share', () => {
    const shared = sharedPrefix([
      { name: 'a', latestPrompt: 'You are Loom. Plan.' },
      { name: 'b', latestPrompt: 'You are Loom. Review.' },
    ])
    expect([shared.length, shared.text, shared.agents.map((agent) => [agent.name, agent.share, agent.continuation])]).toEqual([
      14,
      'You are Loom. ',
      [
        ['a', 14 / 19, 'Plan.'],
        ['b', 14 / 21, 'Review.'],
      ],
    ])
  })

  test('never splits a surrogate pair', () => {
    expect(sharedPrefix([{ name: 'a', latestPrompt: 'x😀' }, { name: 'b', latestPrompt: 'x😁' }]).length).toBe(1)
  })

  test('cuts a continuation on a whole code point, never before half of a surrogate pair', () => {
    const shared = sharedPrefix([
      { name: 'a', latestPrompt: `Shared.\n\n${'a'.repeat(79)}🚀 rest` },
      { name: 'b', latestPrompt: 'Shared.\n\nb' },
    ])
    expect(shared.agents.map((agent) => agent.continuation)).toEqual(['a'.repeat(79), 'b'])
    const whole = sharedPrefix([{ name: 'a', latestPrompt: `${'a'.repeat(78)}🚀 rest` }, { name: 'b', latestPrompt: 'b' }])
    expect(whole.agents[0]!.continuation).toBe(`${'a'.repeat(78)}🚀`)
  })

  test('is reported only for two or more agents', () => {
    expect(buildReport([agentLogOf(threeStepLog(), 'a.jsonl')]).shared).toBeUndefined()
    expect(buildReport([agentLogOf(threeStepLog(), 'a.jsonl'), agentLogOf(threeStepLog(), 'b.jsonl')]).shared?.agents).toHaveLength(2)
  })

  test('agent names drop a dotted prefix every file shares, and identical names fall back to the path', () => {
    const log = (file: string) => agentLogOf(threeStepLog(), file)
    expect(agentNames([log('l/session.agent-1.jsonl'), log('l/session.agent-2.jsonl')]).map((a) => a.name)).toEqual(['agent-1', 'agent-2'])
    expect(agentNames([log('x/run.jsonl'), log('y/run.jsonl')]).map((a) => a.name)).toEqual(['x/run.jsonl', 'y/run.jsonl'])
    expect(agentNames([log('l/session.jsonl')]).map((a) => a.name)).toEqual(['session'])
  })
})
