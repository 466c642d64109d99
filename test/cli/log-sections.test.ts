import { describe, expect, test } from 'vitest'
import { agentLogOf } from './fixtures.js'
import { agentModel } from '../../src/cli/report-model.js'
import { createStepSurface, serializeStep, type PromptAssembly } from '../../src/index.js'

type Plain = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

function plain(sections: readonly (readonly [string, string])[]): Plain {
  return { sections: sections.map(([name, text], order) => ({ name, order, text })), contexts: [], variables: {}, tools: [] }
}

describe('serializeStep: the rendered section names', () => {
  test('are logged from the step\'s rendered prompt, leaving out sections that render empty', () => {
    const assembly = plain([
      ['identity', 'You are Loom.'],
      ['empty', ''],
      ['plan', 'Plan first.'],
    ])
    const record = JSON.parse(serializeStep(createStepSurface().step({ assembly })).split('\n')[0]!) as { sections?: string[] }
    expect(record.sections).toEqual(['identity', 'plan'])
  })

  test('let the report tell a removed section from a changed one (the surface lists both as changed)', () => {
    const surface = createStepSurface()
    const first = plain([
      ['identity', 'You are Loom.'],
      ['plan', 'Plan first.'],
    ])
    const second = plain([['identity', 'You are Loom.']])
    const text = serializeStep(surface.step({ assembly: first })) + serializeStep(surface.step({ assembly: second }))
    const row = agentModel(agentLogOf(text, 'a.jsonl')).rows[1]!
    expect(row.sections).toEqual({ changed: [], added: [], removed: ['plan'], withheld: [], restored: [], classified: true })
  })

  test('let the report tell a section the budget withheld from a removed one (from a real budgeted surface)', () => {
    const words = (text: string): number => text.split(/\s+/).filter(Boolean).length
    const surface = createStepSurface({ budget: { maxTokens: 5, countTokens: words } })
    const first = plain([['identity', 'You are Loom.']])
    const second = plain([
      ['identity', 'You are Loom.'],
      ['tips', 'Read before you edit.'],
    ])
    const text = serializeStep(surface.step({ assembly: first })) + serializeStep(surface.step({ assembly: second }))
    const row = agentModel(agentLogOf(text, 'a.jsonl')).rows[1]!
    expect([row.withheld, row.sections]).toEqual([['tips'], { changed: [], added: [], removed: [], withheld: ['tips'], restored: [], classified: true }])
  })
})
