import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test, vi } from 'vitest'
import {
  createStepSurface,
  serializeStep,
  type BudgetWarning,
  type PromptSection,
  type StepResult,
  type StepSurface,
  type StepSurfaceOptions,
} from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// createStepSurface({ budget }) over a real SystemPrompt. A token is a word,
// so the blank-line separator costs nothing and a section of n words costs n.

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

/** `n` distinct words starting with `name`. */
function text(name: string, n: number): string {
  return Array.from({ length: n }, (_, i) => `${name}${i}`).join(' ')
}

/** A section of `n` words at `order`. */
function sized(name: string, order: number, n: number, extra: Partial<PromptSection> = {}): PromptSection {
  return { name, order, text: text(name, n), ...extra }
}

async function app(...sections: PromptSection[]): Promise<Context> {
  const root = await mount(BARE)
  for (const section of sections) root.systemPrompt.section(section)
  return root
}

function surfaceWith(maxTokens: number, headroom = 0, options: Omit<StepSurfaceOptions, 'budget'> = {}, countTokens = words): StepSurface {
  return createStepSurface({ ...options, budget: { maxTokens, countTokens, headroom } })
}

async function step(surface: StepSurface, root: Context): Promise<StepResult> {
  return surface.step({ assembly: await root.systemPrompt.assemble() })
}

function budgetWarnings(result: StepResult): BudgetWarning[] {
  return result.warnings.filter((warning): warning is BudgetWarning => 'sections' in warning)
}

function sent(result: StepResult): string[] {
  return result.rendered.parts.map((part) => part.name)
}

describe('withholding through the surface', () => {
  test('without a budget the result has no withheld or overBudget field', async () => {
    const result = await step(createStepSurface(), await app(sized('a', 1, 5)))
    expect(result).not.toHaveProperty('withheld')
    expect(result).not.toHaveProperty('overBudget')
  })

  test('a prompt within maxTokens is sent whole, with nothing withheld and no budget warning', async () => {
    const result = await step(surfaceWith(30), await app(sized('a', 1, 10), sized('b', 2, 10)))
    expect([result.withheld, result.overBudget, sent(result), result.warnings]).toEqual([[], false, ['a', 'b'], []])
  })

  test('over maxTokens the lowest priority section is withheld, and events and rendered describe the prompt sent', async () => {
    const root = await app(sized('a', 1, 10, { priority: 1 }), sized('b', 2, 10, { priority: -1 }), sized('c', 3, 10))
    const result = await step(surfaceWith(25), root)
    expect(result.withheld).toEqual(['b'])
    expect(sent(result)).toEqual(['a', 'c'])
    expect(result.events[0]).toEqual({ type: 'system/message', op: 'append', node: 0, text: `${text('a', 10)}\n\n${text('c', 10)}` })
    expect(result.rendered.text).toBe((result.events[0] as { text: string }).text)
    expect(result.promptTokens).toBe(20)
  })

  test('among equal priorities the later section is withheld first, so the prefix survives', async () => {
    const result = await step(surfaceWith(25), await app(sized('a', 1, 10), sized('b', 2, 10), sized('c', 3, 10)))
    expect(result.withheld).toEqual(['c'])
    expect(budgetWarnings(result)).toEqual([
      expect.objectContaining({ kind: 'withheld', sections: ['c'], message: expect.stringContaining('token budget withheld prompt section "c"') }),
    ])
  })

  test('a required or complete section is never withheld: the prompt goes out as small as possible with overBudget and a warning on every step', async () => {
    const root = await app(sized('a', 1, 10, { required: true, priority: -5 }), sized('b', 2, 10, { priority: 3 }))
    const surface = surfaceWith(8)
    const first = await step(surface, root)
    const second = await step(surface, root)
    expect([first.withheld, first.overBudget, sent(first)]).toEqual([['b'], true, ['a']])
    expect(budgetWarnings(first).map((warning) => warning.kind)).toEqual(['withheld', 'over-budget'])
    expect(budgetWarnings(second).map((warning) => warning.kind)).toEqual(['over-budget'])
    expect(budgetWarnings(second)[0]!.message).toMatch(/^the prompt is 10 tokens, over maxTokens 8 even with every withholdable section withheld/)
  })

  test('a complete section is sent however low its priority', async () => {
    const root = await app(sized('whole', 1, 12, { complete: true, priority: -9 }))
    const result = await step(surfaceWith(5), root)
    expect([result.withheld, result.overBudget, sent(result)]).toEqual([[], true, ['whole']])
  })

  test('a new section withheld at once leaves the prompt sent unchanged: no event and no changed section', async () => {
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const surface = surfaceWith(25)
    await step(surface, root)
    root.systemPrompt.section(sized('c', 3, 10))
    const result = await step(surface, root)
    // c itself is withheld: the prompt sent is unchanged.
    expect([result.withheld, result.events, result.changedSections, result.stablePrefixLength]).toEqual([['c'], [], [], result.rendered.text.length])
  })

  test('a new higher-priority section pushes an earlier, lower one out: the prompt changes from that section on', async () => {
    const root = await app(sized('a', 1, 10), sized('b', 2, 10, { priority: -1 }), sized('c', 3, 4))
    const surface = surfaceWith(25)
    await step(surface, root)
    root.systemPrompt.section(sized('d', 4, 8, { priority: 2 }))
    const result = await step(surface, root)
    expect(result.withheld).toEqual(['b'])
    expect(result.changedSections).toEqual(['b', 'd'])
    expect(result.stablePrefixLength).toBe(text('a', 10).length + 2)
    expect(result.events.map((event) => event.type)).toEqual(['system/message'])
  })
})

describe('the sticky withheld set', () => {
  test('with an unchanged registry the prompt object, the withheld set and the events stay the same, and nothing is counted again', async () => {
    const count = vi.fn(words)
    const root = await app(sized('a', 1, 10), sized('b', 2, 10), sized('c', 3, 10))
    const surface = surfaceWith(25, 0.1, {}, count)
    const first = await step(surface, root)
    count.mockClear()
    const later = [await step(surface, root), await step(surface, root)]
    expect(count).not.toHaveBeenCalled()
    for (const result of later) {
      expect(result.rendered).toBe(first.rendered)
      expect([result.withheld, result.events, result.warnings, result.changedSections]).toEqual([['c'], [], [], []])
    }
  })

  test('a withheld section stays withheld while the prompt with it fits maxTokens but not the headroom', async () => {
    const b = signal(text('b', 10))
    const root = await app(sized('a', 1, 10), { name: 'b', order: 2, text: b }, sized('c', 3, 5))
    const surface = surfaceWith(24, 0.25)
    expect((await step(surface, root)).withheld).toEqual(['c'])
    b.value = text('b', 8)
    // With c back the prompt would be 23 tokens: within 24, but over 18 (24 × 0.75).
    const result = await step(surface, root)
    expect([result.withheld, budgetWarnings(result)]).toEqual([['c'], []])
  })

  test('restores a section once the prompt with it fits within maxTokens × (1 − headroom), with a restored warning', async () => {
    const b = signal(text('b', 10))
    const root = await app(sized('a', 1, 10), { name: 'b', order: 2, text: b }, sized('c', 3, 5))
    const surface = surfaceWith(24, 0.25)
    expect((await step(surface, root)).withheld).toEqual(['c'])
    b.value = text('b', 3)
    const result = await step(surface, root)
    expect(result.withheld).toEqual([])
    expect(sent(result)).toEqual(['a', 'b', 'c'])
    expect(budgetWarnings(result)).toEqual([expect.objectContaining({ kind: 'restored', sections: ['c'] })])
    expect(budgetWarnings(result)[0]!.message).toContain('within 18 (maxTokens 24 less 25% headroom)')
  })

  test('restores the highest priority section first and stops at the first that does not fit', async () => {
    const a = signal(text('a', 20))
    const root = await app({ name: 'a', order: 1, text: a, required: true }, sized('b', 2, 6, { priority: 2 }), sized('c', 3, 2, { priority: 1 }))
    const surface = surfaceWith(22)
    expect((await step(surface, root)).withheld).toEqual(['b', 'c'])
    a.value = text('a', 17)
    // b first: 17 + 6 = 23 does not fit, so c waits behind it although 17 + 2 would.
    expect((await step(surface, root)).withheld).toEqual(['b', 'c'])
    a.value = text('a', 15)
    // b: 15 + 6 = 21 fits; then c: 23 does not.
    const result = await step(surface, root)
    expect([result.withheld, sent(result)]).toEqual([['c'], ['a', 'b']])
  })

  test('a withheld section that leaves the registry leaves the withheld set', async () => {
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const dispose = root.systemPrompt.section(sized('c', 3, 10))
    const surface = surfaceWith(25)
    expect((await step(surface, root)).withheld).toEqual(['c'])
    await dispose()
    const result = await step(surface, root)
    expect([result.withheld, result.events, budgetWarnings(result)]).toEqual([[], [], []])
  })
})

describe('what the surface reads from the budgeted prompt', () => {
  test('a kept section referencing a volatile variable is still linted', async () => {
    const root = await app({ name: 'clock', order: 1, text: 'Now {{now}}.' }, sized('tail', 2, 30))
    root.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    const result = await step(surfaceWith(10), root)
    expect(result.withheld).toEqual(['tail'])
    expect(result.rendered.variables.map((variable) => variable.name)).toEqual(['now'])
    expect(result.warnings.map((warning) => warning.kind)).toEqual(['volatile-variable', 'withheld'])
  })

  test('a withheld section referencing a volatile variable is not linted (it is not sent)', async () => {
    const root = await app(sized('head', 1, 5), { name: 'clock', order: 2, text: `Now {{now}}. ${text('c', 30)}` })
    root.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    const result = await step(surfaceWith(10), root)
    expect(result.withheld).toEqual(['clock'])
    expect(result.warnings.map((warning) => warning.kind)).toEqual(['withheld'])
  })

  test('the session log records withheld and overBudget on the step record, and the withheld set\'s warnings as they are', async () => {
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const record = JSON.parse(serializeStep(await step(surfaceWith(15), root)).split('\n')[0]!)
    expect(record).toMatchObject({ withheld: ['b'], overBudget: false, sections: ['a'], promptTokens: 10 })
    expect(record.warnings).toEqual([expect.objectContaining({ kind: 'withheld', sections: ['b'] })])
  })
})

describe('token figures with a budget', () => {
  test('with the budget alone, the figures follow its count rule on the prompt sent', async () => {
    const b = signal('b0 b1 b2')
    const root = await app(sized('a', 1, 10), { name: 'b', order: 2, text: b }, sized('c', 3, 10))
    const surface = surfaceWith(100)
    await step(surface, root)
    b.value = 'b0 b1 x2'
    const result = await step(surface, root)
    // the stable prefix: all of a, the separator, and "b0 b1 " of b
    expect(result).toMatchObject({ promptTokens: 23, stablePrefixTokens: 12, reusablePrefixTokens: 12 })
    expect(surface.observeUsage({ inputTokens: 30, cachedInputTokens: 12 }).predictedTokens).toBe(12)
  })

  test('a steady step reports the whole prompt as stable tokens without counting anything', async () => {
    const count = vi.fn(words)
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const surface = surfaceWith(15, 0, {}, count)
    await step(surface, root)
    count.mockClear()
    expect(await step(surface, root)).toMatchObject({ promptTokens: 10, stablePrefixTokens: 10 })
    expect(count).not.toHaveBeenCalled()
  })

  test('countTokens given as the budget\'s own function counts by the budget\'s rule, once per text', async () => {
    const count = vi.fn(words)
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const result = await step(createStepSurface({ countTokens: count, budget: { maxTokens: 100, countTokens: count } }), root)
    expect(result.promptTokens).toBe(20)
    expect(count.mock.calls.map(([arg]) => arg)).toEqual([text('a', 10), text('b', 10), '\n\n'])
  })

  test('a different countTokens counts the joined text of the prompt sent, the budget deciding by its own', async () => {
    const chars = (value: string): number => value.length
    const root = await app(sized('a', 1, 10), sized('b', 2, 10))
    const result = await step(createStepSurface({ countTokens: chars, budget: { maxTokens: 15, countTokens: words } }), root)
    expect([result.withheld, result.promptTokens]).toEqual([['b'], text('a', 10).length])
  })
})

describe('bad input', () => {
  test.each([
    [{ maxTokens: 0, countTokens: words }, /^budget option "maxTokens" must be a positive finite number \(got number 0\)/],
    [{ maxTokens: -1, countTokens: words }, /^budget option "maxTokens" must be a positive finite number \(got number -1\)/],
    [{ maxTokens: Number.NaN, countTokens: words }, /^budget option "maxTokens" must be a positive finite number \(got number NaN\)/],
    [{ maxTokens: Number.POSITIVE_INFINITY, countTokens: words }, /^budget option "maxTokens" must be a positive finite number \(got number Infinity\)/],
    [{ countTokens: words }, /^budget option "maxTokens" must be a positive finite number \(got undefined\)/],
    [{ maxTokens: 10, countTokens: 'gpt' }, /^budget option "countTokens" must be a function \(text\) => number \(got string "gpt"\)/],
    [{ maxTokens: 10 }, /^budget option "countTokens" must be a function/],
    [{ maxTokens: 10, countTokens: words, headroom: 1 }, /^budget option "headroom" must be a number in \[0, 1\) \(got number 1\)/],
    [{ maxTokens: 10, countTokens: words, headroom: -0.1 }, /^budget option "headroom" must be a number in \[0, 1\) \(got number -0\.1\)/],
    [{ maxTokens: 10, countTokens: words, headroom: Number.NaN }, /^budget option "headroom" must be a number in \[0, 1\)/],
    [{ maxTokens: 10, countTokens: words, headRoom: 0.2 }, /^unknown budget option "headRoom"; known options: maxTokens, countTokens, headroom/],
    [42, /^budget must be an object \{ maxTokens, countTokens, headroom\?, shared\? \} \(got number 42\)/],
    [{ maxTokens: 10, countTokens: words, shared: 'always' }, /^budget option "shared" must be "ignore" or "prefer-unshared" \(got string "always"\)/],
    [null, /^budget must be an object/],
  ])('createStepSurface rejects budget %o with a TypeError', (budget, message) => {
    expect(() => createStepSurface({ budget: budget as never })).toThrow(TypeError)
    expect(() => createStepSurface({ budget: budget as never })).toThrow(message)
  })

  test.each([Number.NaN, Number.POSITIVE_INFINITY, '1', null])('section() rejects priority %s with a TypeError naming the section, registering nothing', async (priority) => {
    const root = await app()
    expect(() => root.systemPrompt.section({ name: 'tips', order: 1, text: 'x', priority: priority as number })).toThrow(TypeError)
    expect(() => root.systemPrompt.section({ name: 'tips', order: 1, text: 'x', priority: priority as number })).toThrow(
      /^prompt section "tips" priority must be a finite number \(got .*\); higher priorities are withheld last by a token budget/,
    )
    expect((await root.systemPrompt.assemble()).sections.map((section) => section.name)).not.toContain('tips')
  })
})

describe('a failing countTokens', () => {
  type Bad = (text: string) => unknown
  const bads: [string, Bad][] = [
    ['throws', () => {
      throw new Error('tokenizer offline')
    }],
    ['returns a negative count', () => -1],
    ['returns NaN', () => Number.NaN],
    ['returns a string', () => '7'],
  ]

  /** A surface whose countTokens misbehaves on texts that `when` picks while `failing.on` is set. */
  function flaky(bad: Bad, when: (text: string) => boolean) {
    const failing = { on: false }
    const count = (value: string): number => (failing.on && when(value) ? (bad(value) as number) : words(value))
    return { failing, surface: createStepSurface({ budget: { maxTokens: 25, countTokens: count, headroom: 0.1 } }) }
  }

  test.each(bads)('that %s on a new section fails the step naming countTokens, and the surface goes on as if the step never happened', async (_, bad) => {
    const root = await app(sized('a', 1, 10), sized('b', 2, 10), sized('c', 3, 10))
    const { failing, surface } = flaky(bad, (value) => value.startsWith('d0'))
    const fresh = createStepSurface({ budget: { maxTokens: 25, countTokens: words, headroom: 0.1 } })
    const first = await root.systemPrompt.assemble()
    surface.step({ assembly: first })
    fresh.step({ assembly: first })

    const dispose = root.systemPrompt.section(sized('d', 0, 3, { priority: 5 }))
    const failed = await root.systemPrompt.assemble()
    failing.on = true
    expect(() => surface.step({ assembly: failed })).toThrow(/^budget countTokens (threw|returned)/)
    expect(() => surface.step({ assembly: failed })).toThrow(/for rendered part "d"/)
    failing.on = false

    const next: unknown[] = [surface.step({ assembly: failed })]
    const expected: unknown[] = [fresh.step({ assembly: failed })]
    await dispose()
    const after = await root.systemPrompt.assemble()
    next.push(surface.step({ assembly: after }), surface.step({ assembly: after }))
    expected.push(fresh.step({ assembly: after }), fresh.step({ assembly: after }))
    expect(next).toEqual(expected)
    expect((next[0] as StepResult).step).toBe(2)
  })

  test.each(bads)('that %s on the stable prefix (after the budget planned a restore) fails the step and leaves the withheld set as it was', async (_, bad) => {
    const b = signal(text('b', 10))
    const root = await app(sized('a', 1, 10), { name: 'b', order: 2, text: b }, sized('c', 3, 10))
    // Only the token figures count a slice that starts with the separator.
    const { failing, surface } = flaky(bad, (value) => value.startsWith('\n\n') && value.length > 2)
    const fresh = createStepSurface({ budget: { maxTokens: 25, countTokens: words, headroom: 0.1 } })
    const first = await root.systemPrompt.assemble()
    for (const target of [surface, fresh]) expect(target.step({ assembly: first }).withheld).toEqual(['c'])

    // b shrinks to 2 tokens: with c back the prompt is 22, within 22.5, so the plan restores c.
    b.value = 'b0 y'
    const changed = await root.systemPrompt.assemble()
    failing.on = true
    expect(() => surface.step({ assembly: changed })).toThrow(/^budget countTokens .*the stable prefix's end in rendered part "b"/)
    failing.on = false
    const next = [surface.step({ assembly: changed }), surface.step({ assembly: changed })]
    const expected = [fresh.step({ assembly: changed }), fresh.step({ assembly: changed })]
    expect(next).toEqual(expected)
    expect(next.map((result) => [result.step, result.withheld])).toEqual([[2, []], [3, []]])
    expect(budgetWarnings(next[0]!)).toEqual([expect.objectContaining({ kind: 'restored', sections: ['c'] })])
  })
})
