import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { cacheRules, createStepSurface, type CacheRules } from '../../src/index.js'
import { BARE, mount, tool } from '../assembly/system-prompt.fixtures.js'

// SPEC §4.3 "Cache rules and expected reuse". One character counts as one token here.
const countTokens = (text: string): number => text.length
const ANY: CacheRules = Object.freeze({ provider: 'anthropic', minimumTokens: 0, granularity: 1, breakpoints: true })

describe('cacheRules', () => {
  test("anthropic: each documented model's minimum, matched with date, platform and dotted forms; an unknown model gets the largest", () => {
    const minimum = (model: string) => cacheRules.anthropic({ model }).minimumTokens
    expect(minimum('claude-sonnet-4-5-20250929')).toBe(1024)
    expect(minimum('claude-opus-4-1-20250805')).toBe(1024)
    expect(minimum('claude-opus-4-20250514')).toBe(1024)
    expect(minimum('claude-opus-4-6')).toBe(4096)
    expect(minimum('claude-opus-4-7')).toBe(2048)
    expect(minimum('claude-opus-4-8')).toBe(1024)
    expect(minimum('claude-opus-5')).toBe(512)
    expect(minimum('claude-haiku-4-5@20251001')).toBe(4096)
    expect(minimum('us.anthropic.claude-sonnet-4-6-v1:0')).toBe(1024)
    expect(minimum('anthropic/claude-sonnet-4.5')).toBe(1024)
    expect(minimum('claude-3-5-haiku-latest')).toBe(2048)
    expect(minimum('claude-opus-4-9')).toBe(4096)
    expect(minimum('gpt-5')).toBe(4096)
  })

  test('each provider: frozen rules from the table, minimumTokens overridable', () => {
    const sonnet = cacheRules.anthropic({ model: 'claude-sonnet-4-6' })
    expect(sonnet).toEqual({ provider: 'anthropic', minimumTokens: 1024, granularity: 1, breakpoints: true })
    expect(Object.isFrozen(sonnet)).toBe(true)
    expect(cacheRules.openai()).toEqual({ provider: 'openai', minimumTokens: 1024, granularity: 128, breakpoints: false })
    expect(cacheRules.deepseek()).toEqual({ provider: 'deepseek', minimumTokens: 64, granularity: 64, breakpoints: false })
    expect(cacheRules.anthropic({ model: 'claude-opus-4-6', minimumTokens: 100 }).minimumTokens).toBe(100)
    expect(cacheRules.openai({ model: 'gpt-5', minimumTokens: 2048 }).minimumTokens).toBe(2048)
  })

  test('bad options are TypeErrors naming them', () => {
    expect(() => cacheRules.anthropic({} as never)).toThrow(/cacheRules.anthropic option "model" must be the Claude model id/)
    expect(() => cacheRules.deepseek({ minimumTokens: -1 })).toThrow(/cacheRules.deepseek option "minimumTokens" must be a non-negative integer \(got number -1\)/)
    expect(() => createStepSurface({ countTokens, cacheRules: { provider: 'openai', minimumTokens: 1, granularity: 0, breakpoints: false } })).toThrow(/field "granularity" must be a positive integer/)
  })

  test('cacheRules without countTokens is a TypeError from createStepSurface', () => {
    expect(() => createStepSurface({ cacheRules: cacheRules.openai() })).toThrow(/createStepSurface option "cacheRules" needs a "countTokens" option/)
  })
})

async function world() {
  const app = await mount(BARE)
  const clock = signal('Step 1.')
  const notes = signal('Notes one.')
  app.systemPrompt.section({ name: 'policy', order: 0, text: 'Run the tests before you commit.', stability: 'static', cacheBreakpoint: true })
  app.systemPrompt.section({ name: 'notes', order: 1, text: notes })
  app.systemPrompt.section({ name: 'clock', order: 2, text: clock, stability: 'volatile' })
  return { app, clock, notes, assemble: () => app.systemPrompt.assemble() }
}

describe('expectedCachedTokens with breakpoints (Anthropic)', () => {
  test('0 on the first step; then the tokens through the last marked block inside the identical prefix', async () => {
    const { clock, assemble } = await world()
    const surface = createStepSurface({ countTokens, cacheRules: ANY })
    const first = surface.step({ assembly: await assemble() })
    expect(first).toMatchObject({ expectedCachedTokens: 0 })
    expect(first).not.toHaveProperty('cacheNote')
    clock.value = 'Step 2.'
    const second = surface.step({ assembly: await assemble() })
    // blocks [policy]* [notes]* [clock]: the notes block ends the stable run.
    const throughNotes = 'Run the tests before you commit.\n\nNotes one.'.length
    expect(second).toMatchObject({ expectedCachedTokens: throughNotes })
    expect(second.reusablePrefixTokens).toBeGreaterThan(throughNotes)
  })

  test("'no-breakpoint': a reusable prefix that ends before the first marked block's end", async () => {
    const { notes, assemble } = await world()
    const surface = createStepSurface({ countTokens, cacheRules: ANY })
    surface.step({ assembly: await assemble() })
    notes.value = 'Notes two.'
    // The policy block is still marked and identical: it is cached.
    expect(surface.step({ assembly: await assemble() })).toMatchObject({ expectedCachedTokens: 'Run the tests before you commit.'.length })
    const bare = await mount(BARE)
    const tail = signal('B one.')
    bare.systemPrompt.section({ name: 'a', order: 0, text: 'A.' })
    bare.systemPrompt.section({ name: 'b', order: 1, text: tail })
    const other = createStepSurface({ countTokens, cacheRules: ANY })
    other.step({ assembly: await bare.systemPrompt.assemble() })
    tail.value = 'B two.'
    const step = other.step({ assembly: await bare.systemPrompt.assemble() })
    expect(step.reusablePrefixTokens).toBeGreaterThan(0)
    expect(step).toMatchObject({ expectedCachedTokens: 0, cacheNote: 'no-breakpoint' })
  })

  test('a marked block that was not marked at the same place last step is not expected to be read (nothing was written there)', async () => {
    const bare = await mount(BARE)
    const extra = signal('B.')
    bare.systemPrompt.section({ name: 'a', order: 0, text: 'A.' })
    bare.systemPrompt.section({ name: 'b', order: 1, text: extra })
    const surface = createStepSurface({ countTokens, cacheRules: ANY })
    surface.step({ assembly: await bare.systemPrompt.assemble() })
    extra.value = ''
    // The prompt shrank to "A.", all of it identical, but the last request's marker was after "B.".
    expect(surface.step({ assembly: await bare.systemPrompt.assemble() })).toMatchObject({ expectedCachedTokens: 0, cacheNote: 'no-breakpoint' })
  })

  test("'below-minimum': the tools' tokens plus the cached system tokens under the model's minimum", async () => {
    const { clock, app, assemble } = await world()
    app.systemPrompt.tools(() => ({ schemas: [tool('read')] }))
    const surface = createStepSurface({ countTokens, cacheRules: cacheRules.anthropic({ model: 'claude-sonnet-4-6' }) })
    surface.step({ assembly: await assemble() })
    clock.value = 'Step 2.'
    expect(surface.step({ assembly: await assemble() })).toMatchObject({ expectedCachedTokens: 0, cacheNote: 'below-minimum' })
    // The tools count: with a minimum the tools alone reach, the system tokens are expected.
    const toolsTokens = JSON.stringify([tool('read')]).length
    const low = createStepSurface({ countTokens, cacheRules: cacheRules.anthropic({ model: 'claude-sonnet-4-6', minimumTokens: toolsTokens + 1 }) })
    low.step({ assembly: await assemble() })
    clock.value = 'Step 3.'
    expect(low.step({ assembly: await assemble() }).expectedCachedTokens).toBeGreaterThan(0)
  })

  test('0 without a note when the tools or config changed', async () => {
    const { app, assemble } = await world()
    const surface = createStepSurface({ countTokens, cacheRules: ANY })
    surface.step({ assembly: await assemble(), config: { model: 'a' } })
    const changed = surface.step({ assembly: await assemble(), config: { model: 'b' } })
    expect(changed).toMatchObject({ configChanged: true, expectedCachedTokens: 0 })
    expect(changed).not.toHaveProperty('cacheNote')
    app.systemPrompt.tools(() => ({ schemas: [tool('grep')] }))
    expect(surface.step({ assembly: await assemble(), config: { model: 'b' } })).toMatchObject({ toolsChanged: true, expectedCachedTokens: 0 })
  })
})

describe('expectedCachedTokens without breakpoints (OpenAI, DeepSeek)', () => {
  test('the reusable tokens rounded down to the granularity; below the minimum 0', async () => {
    const app = await mount(BARE)
    const tail = signal('x')
    app.systemPrompt.section({ name: 'big', order: 0, text: 'a'.repeat(1300) })
    app.systemPrompt.section({ name: 'tail', order: 1, text: tail, stability: 'volatile' })
    const openai = createStepSurface({ countTokens, cacheRules: cacheRules.openai() })
    const deepseek = createStepSurface({ countTokens, cacheRules: cacheRules.deepseek() })
    const small = createStepSurface({ countTokens, cacheRules: cacheRules.openai({ minimumTokens: 2000 }) })
    for (const surface of [openai, deepseek, small]) surface.step({ assembly: await app.systemPrompt.assemble() })
    tail.value = 'y'
    const assembly = await app.systemPrompt.assemble()
    const step = openai.step({ assembly })
    expect(step.reusablePrefixTokens).toBe(1302)
    expect(step.expectedCachedTokens).toBe(1280)
    expect(deepseek.step({ assembly }).expectedCachedTokens).toBe(1280)
    expect(small.step({ assembly })).toMatchObject({ expectedCachedTokens: 0, cacheNote: 'below-minimum' })
  })
})

describe('observeUsage', () => {
  test('records expectedTokens beside cachedInputTokens, and the write split', async () => {
    const { clock, assemble } = await world()
    const surface = createStepSurface({ countTokens, cacheRules: ANY })
    surface.step({ assembly: await assemble() })
    clock.value = 'Step 2.'
    const step = surface.step({ assembly: await assemble() })
    expect(surface.observeUsage({ inputTokens: 100, cachedInputTokens: 40, cacheWriteTokens: 10, cacheWrite5mTokens: 4, cacheWrite1hTokens: 6 })).toEqual({
      type: 'usage',
      step: 2,
      inputTokens: 100,
      cachedInputTokens: 40,
      cacheWriteTokens: 10,
      cacheWrite5mTokens: 4,
      cacheWrite1hTokens: 6,
      predictedTokens: step.reusablePrefixTokens,
      expectedTokens: step.expectedCachedTokens,
    })
  })

  test('more cached than input tokens is a TypeError naming both fields', async () => {
    const surface = createStepSurface()
    const { assemble } = await world()
    surface.step({ assembly: await assemble() })
    expect(() => surface.observeUsage({ inputTokens: 10, cachedInputTokens: 11 })).toThrow(/observeUsage field "cachedInputTokens" \(11\) exceeds "inputTokens" \(10\)/)
    expect(() => surface.observeUsage({ inputTokens: undefined as never, cachedInputTokens: 0 })).toThrow(/"inputTokens" must be a non-negative finite number \(got undefined\)/)
  })

  test('a countTokens that throws while counting for the expectation fails the step and changes nothing', async () => {
    const { clock, assemble } = await world()
    let fail = false
    const surface = createStepSurface({ countTokens: (text) => (fail && text.endsWith('Notes one.') ? Number.NaN : text.length), cacheRules: ANY })
    const first = surface.step({ assembly: await assemble() })
    fail = true
    clock.value = 'Step 2.'
    const assembly = await assemble()
    expect(() => surface.step({ assembly })).toThrow(/countTokens" must return a non-negative finite number \(got number NaN\) for the prompt through its last cached block/)
    fail = false
    // The failed step left the surface as it was: this is step 2, compared with step 1.
    expect(surface.step({ assembly })).toMatchObject({ step: 2, expectedCachedTokens: first.rendered.blocks.slice(0, 2).map((b) => b.text).join('\n\n').length })
  })
})
