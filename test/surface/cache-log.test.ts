import { describe, expect, test } from 'vitest'
import { cacheRules, createStepSurface, parseSessionLog, serializeStep, serializeUsage } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// SPEC §4.3: "observeUsage records expectedTokens beside cachedInputTokens"; the session log carries both.
describe('the session log carries the cache expectation', () => {
  test('a step keeps expectedCachedTokens and cacheNote, its usage record expectedTokens and the write split', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Run the tests before you commit.' })
    const surface = createStepSurface({ countTokens: (text) => text.length, cacheRules: cacheRules.anthropic({ model: 'claude-sonnet-4-5' }) })
    let log = ''
    for (let i = 0; i < 2; i++) {
      log += serializeStep(surface.step({ assembly: await app.systemPrompt.assemble() }))
      log += serializeUsage(surface.observeUsage({ inputTokens: 40, cachedInputTokens: 0, cacheWriteTokens: 30, cacheWrite5mTokens: 30, cacheWrite1hTokens: 0 }))
    }
    const [first, second] = parseSessionLog(log).steps
    expect(first!.expectedCachedTokens).toBe(0)
    expect(second!.expectedCachedTokens).toBe(0)
    expect(second!.cacheNote).toBe('below-minimum')
    expect(second!.usage).toMatchObject({ expectedTokens: 0, cacheWrite5mTokens: 30, cacheWrite1hTokens: 0 })
  })

  test('a logged cacheNote outside the known notes is an error naming the field and line', () => {
    const line = JSON.stringify({ type: 'step', step: 1, compacted: false, stablePrefixLength: 0, stablePrefixBytes: 0, changedSections: [], warnings: [], cacheNote: 'later' })
    expect(() => parseSessionLog(line + '\n', 'x.jsonl')).toThrow(/x\.jsonl.*line 1.*cacheNote/s)
  })
})
