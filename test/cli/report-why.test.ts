import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { buildReport, agentModel, stepAnchor } from '../../src/cli/report-model.js'
import { renderReportHtml } from '../../src/cli/report-html.js'
import { stepParts } from '../../src/cli/report-model.js'
import { cacheRules, createStepSurface, serializeStep, serializeUsage, type StepSurface } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'
import { agentLogOf, jsonl, messageLine, stepLine } from './fixtures.js'

// The report model answers "why did my cache break at step N?" from logs the
// real step surface wrote, and draws which agents share which parts.

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

/** Three agents under preset "coder"; agent-2 has its own persona line; `branch` changes at step 3. */
async function session(steps = 4): Promise<Record<string, string>> {
  const root = await mount(BARE)
  const preset = { name: 'coder' }
  const presetScope = await mintScope(root, preset)
  const keys = [{ name: 'agent-1' }, { name: 'agent-2' }, { name: 'agent-3' }]
  const scopes = []
  for (const key of keys) scopes.push(await mintScope(root, key, preset))
  const branch = signal('main')
  root.systemPrompt.variable('branch', branch)
  root.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom, a coding agent.' })
  scopes[1]!.ctx.systemPrompt.section({ name: 'persona', order: 5, text: 'You review code and never push.' })
  presetScope.ctx.systemPrompt.section({ name: 'guidance', order: 10, text: 'Read before you edit.' })
  root.systemPrompt.section({ name: 'policy', order: 20, text: 'Plan first.' })
  root.systemPrompt.section({ name: 'env', order: 30, text: 'Work on branch {{branch}}.' })
  const surfaces = new Map<object, StepSurface>(keys.map((key) => [key, createStepSurface({ budget: { maxTokens: 100, countTokens: words }, cacheRules: cacheRules.deepseek() })]))
  const logs: Record<string, string> = Object.fromEntries(keys.map((key) => [key.name, '']))
  for (let step = 1; step <= steps; step++) {
    if (step === 3) branch.value = 'feature/login'
    for (const key of keys) {
      const surface = surfaces.get(key)!
      logs[key.name] += serializeStep(surface.step({ assembly: await root.systemPrompt.assemble({ scope: key }) }))
      logs[key.name] += serializeUsage(surface.observeUsage({ inputTokens: 40, cachedInputTokens: step === 1 ? 0 : 20 }))
    }
  }
  return logs
}

describe('a step that lost reuse', () => {
  test('carries the cause, the section text before and after, and expected vs observed figures', async () => {
    const logs = await session()
    const row = agentModel(agentLogOf(logs['agent-1']!, 'agent-1.jsonl')).rows[2]!
    expect(row.cacheBreak).toEqual({ cause: 'section', section: 'env', layer: 'global', variable: 'branch' })
    expect(row.changedText).toEqual({ before: 'Work on branch main.', after: 'Work on branch feature/login.' })
    expect([row.expectedTokens, row.usage?.cachedInputTokens, row.quiet, row.anchor]).toEqual([0, 20, false, 'agent-1-step-3'])
  })

  test('unchanged steps are quiet, steps after a break are not lost', async () => {
    const rows = agentModel(agentLogOf((await session(5))['agent-1']!, 'agent-1.jsonl')).rows
    expect(rows.map((row) => [row.step, row.quiet, row.cacheBreak?.cause])).toEqual([
      [1, false, undefined],
      [2, true, undefined],
      [3, false, 'section'],
      [4, true, undefined],
      [5, true, undefined],
    ])
  })

  test('the page shows the cause and the diff under the row, and folds the two unchanged steps after it', async () => {
    const logs = await session(5)
    const out = renderReportHtml(buildReport([agentLogOf(logs['agent-1']!, 'agent-1.jsonl')]))
    expect(out).toContain('<span class="cause" data-cause="section">section</span><code class="section">env</code>')
    expect(out).toContain('<span class="line removed">- Work on branch <mark>main</mark>.</span>')
    expect(out).toContain('<span class="line added">+ Work on branch <mark>feature/login</mark>.</span>')
    expect(out).toContain('the value of variable <code>branch</code> changed')
    expect(out).toMatch(/<tbody class="run" data-steps="4-5">/)
    expect(out).toContain('id="agent-1-step-4"')
  })

  test('a log without part lengths still shows the cause, and says the text is not in the log', () => {
    const text = jsonl(
      stepLine(1, { sections: ['a'] }),
      messageLine('Alpha', 'append'),
      stepLine(2, { sections: ['a'], stablePrefixLength: 2, cacheBreak: { cause: 'section', section: 'a', layer: 'global' } }),
      messageLine('Alps'),
    )
    const log = agentLogOf(text, 'old.jsonl')
    expect(agentModel(log).rows[1]!.changedText).toBeUndefined()
    expect(renderReportHtml(buildReport([log]))).toContain('The log does not hold this section')
  })
})

describe('anchors and parts', () => {
  test('anchors are <agent>-step-N, with the session for a later surface and no whitespace', () => {
    expect([stepAnchor('agent-1', 1, 4), stepAnchor('agent-1', 2, 4), stepAnchor('my agent', 1, 1)]).toEqual(['agent-1-step-4', 'agent-1-session-2-step-4', 'my_agent-step-1'])
  })

  test('a prompt is cut into parts only when the lengths add up to it', () => {
    const step = { prompt: 'Alpha\n\nBeta', sections: ['a', 'b'], sectionLengths: [5, 4], sectionLayers: ['global', null], sectionTokens: [1, 1] }
    expect(stepParts(step)).toEqual([
      { name: 'a', text: 'Alpha', layer: 'global', tokens: 1 },
      { name: 'b', text: 'Beta', layer: undefined, tokens: 1 },
    ])
    expect(stepParts({ ...step, sectionLengths: [5, 3] })).toBeUndefined()
    expect(stepParts({ ...step, sectionLengths: [4, 5] })).toBeUndefined()
    expect(stepParts({ ...step, sectionLengths: undefined })).toBeUndefined()
  })
})

describe('across agents', () => {
  test('the prefix tree has a node shared by two of the three agents, with tokens', async () => {
    const logs = await session(1)
    const model = buildReport(Object.entries(logs).map(([name, text]) => agentLogOf(text, `${name}.jsonl`)))
    const [root, ...others] = model.sharing!.tree
    expect(others).toEqual([])
    expect([root!.agents, root!.parts.map((part) => part.name), root!.tokens]).toEqual([['agent-1', 'agent-2', 'agent-3'], ['intro'], 6])
    expect(root!.children.map((child) => [child.agents, child.parts.map((part) => part.name), child.tokens, child.prefixTokens])).toEqual([
      [['agent-1', 'agent-3'], ['guidance', 'policy', 'env'], 10, 16],
      [['agent-2'], ['persona', 'guidance', 'policy', 'env'], 16, 22],
    ])
  })

  test("a scoped section before a global one is a split costing the tokens its siblings could share; the preset's is shared by all", async () => {
    const logs = await session(1)
    const model = buildReport(Object.entries(logs).map(([name, text]) => agentLogOf(text, `${name}.jsonl`)))
    expect(model.sharing!.splits).toEqual([
      { agent: 'agent-2', section: 'persona', layer: 'agent-2', before: 'policy', siblings: ['agent-1', 'agent-3'], cost: { chars: 21 + 11 + 20, tokens: 10, estimated: false } },
    ])
    expect(model.sharing!.sharedByAll).toEqual([{ section: 'guidance', layer: 'coder' }])
    const out = renderReportHtml(model)
    expect(out).toContain('<li class="node" data-agents="agent-1 agent-3">')
    expect(out).toContain('comes before global <code>policy</code>: it costs 10 tokens it could otherwise share with agent-1, agent-3')
  })
})
