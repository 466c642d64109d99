import { describe, expect, it, vi } from 'vitest'
import { buildRenderedPrompt, type PartInput, type RenderedPrompt } from '../../src/render/rendered-prompt.js'
import { COMPARED_PART_FIELDS } from '../../src/surface/budget-parts.js'
import { TokenBudget, validateBudgetOptions, type BudgetPlan } from '../../src/surface/budget.js'

// The token budget on its own (the step surface's `budget` option drives it):
// prompts are built with the real builder; a token is a word, so the
// blank-line separator costs nothing unless a test says so.

interface Spec {
  readonly words?: number
  readonly text?: string
  readonly priority?: number
  readonly required?: boolean
  readonly complete?: boolean
  readonly stability?: PartInput['stability']
  readonly cacheBreakpoint?: boolean
  readonly restored?: boolean
}

function input(name: string, spec: Spec = {}): PartInput {
  const words = spec.words ?? 10
  return {
    name,
    text: spec.text ?? Array.from({ length: words }, (_, i) => `${name}${i}`).join(' '),
    layer: 'global',
    origin: 'registry',
    stability: spec.stability ?? 'session',
    variables: [],
    cacheBreakpoint: spec.cacheBreakpoint ?? false,
    required: spec.required ?? false,
    restored: spec.restored ?? false,
    complete: spec.complete ?? false,
    priority: spec.priority ?? 0,
    substitutions: [],
  }
}

function prompt(specs: Record<string, Spec>): RenderedPrompt {
  return buildRenderedPrompt(Object.entries(specs).map(([name, spec]) => input(name, spec)))
}

const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length

function budget(maxTokens: number, headroom = 0, countTokens = countWords): TokenBudget {
  return new TokenBudget({ maxTokens, countTokens, headroom })
}

/** plan + commit, as a surface does on a step that succeeds. */
function step(target: TokenBudget, rendered: RenderedPrompt): BudgetPlan {
  const plan = target.plan(rendered)
  target.commit(plan)
  return plan
}

describe('budget options', () => {
  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY, '100', undefined])('rejects maxTokens %s naming the option', (maxTokens) => {
    expect(() => new TokenBudget({ maxTokens: maxTokens as number, countTokens: countWords })).toThrow(
      new TypeError(
        `budget option "maxTokens" must be a positive finite number (got ${maxTokens === undefined ? 'undefined' : `${typeof maxTokens} ${typeof maxTokens === 'string' ? JSON.stringify(maxTokens) : String(maxTokens)}`}); give the model's prompt budget in tokens`,
      ),
    )
  })

  it.each([undefined, 'countTokens', 42])('rejects a countTokens that is not a function (%s)', (countTokens) => {
    expect(() => new TokenBudget({ maxTokens: 100, countTokens: countTokens as never })).toThrow(
      /^budget option "countTokens" must be a function \(text\) => number \(got /,
    )
  })

  it.each([1, 1.5, -0.1, Number.NaN, '0.1'])('rejects headroom %s outside [0, 1)', (headroom) => {
    expect(() => new TokenBudget({ maxTokens: 100, countTokens: countWords, headroom: headroom as number })).toThrow(
      /^budget option "headroom" must be a number in \[0, 1\)/,
    )
  })

  it('accepts headroom 0 and defaults it to 0.1', () => {
    expect(validateBudgetOptions({ maxTokens: 100, countTokens: countWords, headroom: 0 }).restoreTokens).toBe(100)
    expect(validateBudgetOptions({ maxTokens: 100, countTokens: countWords }).headroom).toBe(0.1)
    expect(validateBudgetOptions({ maxTokens: 100, countTokens: countWords }).restoreTokens).toBe(90)
  })

  it('rejects an unknown option (a misspelt headroom would be ignored otherwise)', () => {
    expect(() => new TokenBudget({ maxTokens: 100, countTokens: countWords, headRoom: 0.2 } as never)).toThrow(
      new TypeError('unknown budget option "headRoom"; known options: maxTokens, countTokens, headroom, shared'),
    )
  })

  it('rejects a budget that is not an object', () => {
    expect(() => new TokenBudget(null as never)).toThrow(/^budget must be an object \{ maxTokens, countTokens, headroom\?, shared\? \} \(got null\)/)
  })
})

describe('withholding', () => {
  it('returns the unbudgeted prompt object itself when it fits', () => {
    const rendered = prompt({ a: {}, b: {} })
    const plan = step(budget(20), rendered)
    expect(plan.rendered).toBe(rendered)
    expect(plan).toMatchObject({ withheld: [], overBudget: false, promptTokens: 20, warnings: [] })
  })

  it('withholds the lowest priority first', () => {
    const plan = step(budget(20), prompt({ a: { priority: 1 }, b: { priority: -1 }, c: { priority: 0 } }))
    expect(plan.withheld).toEqual(['b'])
    expect(plan.rendered.text).toBe(prompt({ a: { priority: 1 }, c: {} }).text)
  })

  it('withholds the later of equal priorities first (the prefix survives)', () => {
    const plan = step(budget(25), prompt({ a: {}, b: {}, c: {}, d: {} }))
    expect(plan.withheld).toEqual(['c', 'd'])
  })

  it('never withholds a required or complete part, even the lowest priority', () => {
    const plan = step(budget(20), prompt({ a: { priority: -9, required: true }, b: { priority: -9, complete: true }, c: { priority: 5 } }))
    expect(plan.withheld).toEqual(['c'])
    expect(plan.rendered.parts.map((part) => part.name)).toEqual(['a', 'b'])
  })

  it('reports the withheld names in prompt order, not withhold order', () => {
    const plan = step(budget(10), prompt({ a: { priority: 2 }, b: { priority: 0 }, c: { priority: 1 }, d: { priority: 3 } }))
    expect(plan.withheld).toEqual(['a', 'b', 'c'])
  })

  it('rebuilds the budgeted prompt from the kept parts, so offsets and blocks are right', () => {
    const specs: Record<string, Spec> = { a: { stability: 'static', cacheBreakpoint: true }, b: { stability: 'static' }, c: { stability: 'volatile', priority: -1 }, d: {} }
    const plan = step(budget(30), prompt(specs))
    expect(plan.withheld).toEqual(['c'])
    const { c: _c, ...kept } = specs
    expect(plan.rendered).toEqual(prompt(kept))
    expect(Object.isFrozen(plan.rendered)).toBe(true)
  })

  it('warns naming the sections it newly withholds', () => {
    const plan = step(budget(20), prompt({ a: {}, b: {}, c: {}, d: {} }))
    expect(plan.warnings).toHaveLength(1)
    expect(plan.warnings[0]).toMatchObject({ kind: 'withheld', sections: ['c', 'd'] })
    expect(plan.warnings[0]!.message).toMatch(/^token budget withheld prompt sections "c", "d" .* to fit maxTokens 20; the prompt is now 20 tokens/)
  })

  it('sends a prompt that cannot fit as small as possible, over budget, with a warning every step', () => {
    const target = budget(15)
    const rendered = prompt({ a: { required: true }, b: {}, c: { complete: true } })
    for (let i = 0; i < 3; i++) {
      const plan = step(target, rendered)
      expect(plan).toMatchObject({ withheld: ['b'], overBudget: true, promptTokens: 20 })
      expect(plan.warnings.map((warning) => warning.kind)).toEqual(i === 0 ? ['withheld', 'over-budget'] : ['over-budget'])
    }
    expect(target.plan(prompt({ a: { required: true }, b: {}, c: { complete: true } })).warnings.at(-1)!.message).toMatch(
      /^the prompt is 20 tokens, over maxTokens 15 even with every withholdable section withheld \(section "b"\); the rest is required or complete/,
    )
  })
})

describe('sticky withheld set', () => {
  it('keeps a section withheld when the prompt would fit with it but not within the headroom', () => {
    const target = budget(30, 0.2)
    step(target, prompt({ a: {}, b: {}, c: { words: 11 } }))
    // 30 tokens with c would fit maxTokens, but not 30 × 0.8 = 24
    const plan = step(target, prompt({ a: {}, b: {}, c: {} }))
    expect(plan.withheld).toEqual(['c'])
    expect(plan.warnings).toEqual([])
  })

  it('restores a section once the prompt with it fits maxTokens × (1 − headroom), with a warning', () => {
    const target = budget(30, 0.2)
    step(target, prompt({ a: {}, b: {}, c: { words: 11 } }))
    const plan = step(target, prompt({ a: {}, b: { words: 4 }, c: {} }))
    expect(plan.withheld).toEqual([])
    expect(plan.promptTokens).toBe(24)
    expect(plan.warnings).toEqual([
      expect.objectContaining({ kind: 'restored', sections: ['c'], message: expect.stringMatching(/within 24 \(maxTokens 30 less 20% headroom\)$/) }),
    ])
  })

  it('names the headroom as the percentage it was given (7%, not 7.000000000000001%)', () => {
    const target = budget(1000, 0.07)
    step(target, prompt({ a: { words: 980, required: true }, b: { words: 30 } }))
    const plan = step(target, prompt({ a: { words: 890, required: true }, b: { words: 30 } }))
    expect([plan.withheld, plan.promptTokens]).toEqual([[], 920])
    expect(plan.warnings).toEqual([expect.objectContaining({ kind: 'restored', message: expect.stringMatching(/\(maxTokens 1000 less 7% headroom\)$/) })])
  })

  it('uses a 10% headroom by default', () => {
    const target = new TokenBudget({ maxTokens: 100, countTokens: countWords })
    step(target, prompt({ a: { words: 50 }, b: { words: 51 } }))
    expect(step(target, prompt({ a: { words: 41 }, b: { words: 50 } })).withheld).toEqual(['b'])
    expect(step(target, prompt({ a: { words: 40 }, b: { words: 50 } })).withheld).toEqual([])
  })

  it('restores as soon as the prompt fits maxTokens when headroom is 0', () => {
    const target = budget(30)
    step(target, prompt({ a: {}, b: {}, c: { words: 11 } }))
    expect(step(target, prompt({ a: {}, b: {}, c: {} })).withheld).toEqual([])
  })

  it('restores the highest priority first', () => {
    const target = budget(30)
    expect(step(target, prompt({ a: { words: 30, required: true }, b: { priority: 1 }, c: { priority: 2 } })).withheld).toEqual(['b', 'c'])
    expect(step(target, prompt({ a: { words: 20, required: true }, b: { priority: 1 }, c: { priority: 2 } })).withheld).toEqual(['b'])
  })

  it('keeps a small low-priority section waiting while a higher-priority one cannot be restored yet', () => {
    const target = budget(40)
    step(target, prompt({ a: { words: 40, required: true }, big: { words: 20, priority: 2 }, small: { words: 1, priority: 1 } }))
    // small alone would fit (31 tokens), but big ranks above it and does not (50)
    expect(step(target, prompt({ a: { words: 30, required: true }, big: { words: 20, priority: 2 }, small: { words: 1, priority: 1 } })).withheld).toEqual(['big', 'small'])
  })

  it('withholds a new section at once when it ranks below a withheld one', () => {
    const target = budget(30)
    step(target, prompt({ a: { words: 25, required: true }, b: { priority: 1 } }))
    const plan = step(target, prompt({ a: { words: 25, required: true }, b: { priority: 1 }, n: { words: 1 } }))
    expect(plan.withheld).toEqual(['b', 'n'])
    expect(plan.warnings).toEqual([expect.objectContaining({ kind: 'withheld', sections: ['n'] })])
  })

  it('drops a withheld name that left the prompt from the set (it comes back as a new section)', () => {
    const target = budget(20, 0.5)
    step(target, prompt({ a: {}, b: {}, c: {} }))
    expect(target.withheld).toEqual(['c'])
    step(target, prompt({ a: {}, b: {} }))
    expect(target.withheld).toEqual([])
    // 20 tokens: fits maxTokens, though not the 10 a still-withheld c would need
    expect(step(target, prompt({ a: { words: 5 }, b: { words: 5 }, c: {} })).withheld).toEqual([])
  })

  it('sends a withheld section that became required', () => {
    const target = budget(20)
    step(target, prompt({ a: {}, b: {}, c: {} }))
    const plan = step(target, prompt({ a: { words: 5 }, b: { words: 5 }, c: { required: true } }))
    expect(plan.withheld).toEqual([])
    expect(plan.warnings).toEqual([expect.objectContaining({ kind: 'restored', sections: ['c'] })])
  })

  it('gives an unchanged prompt the same output object and withheld set step after step, without warnings', () => {
    const target = budget(25)
    const rendered = prompt({ a: {}, b: {}, c: {} })
    const first = step(target, rendered)
    for (let i = 0; i < 3; i++) {
      const again = step(target, rendered)
      expect(again.rendered).toBe(first.rendered)
      expect(again.withheld).toEqual(['c'])
      expect(again.warnings).toEqual([])
    }
  })

  it('compares every field of a part before reusing the budgeted object (a new field must join the list)', () => {
    expect([...COMPARED_PART_FIELDS].sort()).toEqual(Object.keys(input('a')).sort())
  })

  it('rebuilds the budgeted prompt when a kept part changed only in a flag', () => {
    const target = budget(25)
    const first = step(target, prompt({ a: {}, b: {}, c: {} }))
    const second = step(target, prompt({ a: { cacheBreakpoint: true }, b: {}, c: {} }))
    expect(second.rendered).not.toBe(first.rendered)
    expect(second.rendered.blocks.map((block) => block.parts)).toEqual([['a'], ['b']])
  })

  it('rebuilds the budgeted prompt when a kept part changed only in being restored', () => {
    const target = budget(25)
    const first = step(target, prompt({ a: { required: true }, b: {}, c: {} }))
    const second = step(target, prompt({ a: { required: true, restored: true }, b: {}, c: {} }))
    expect(second.withheld).toEqual(first.withheld)
    expect(second.rendered).not.toBe(first.rendered)
    expect(second.rendered.parts[0]!.restored).toBe(true)
  })

  it('rebuilds the budgeted prompt when a kept part comes from another scope whose key has the same fields', () => {
    const target = budget(25)
    const from = (layer: object): RenderedPrompt => buildRenderedPrompt(['a', 'b', 'c'].map((name) => ({ ...input(name), layer })))
    const first = step(target, from({}))
    const second = step(target, from({}))
    expect(second.rendered).not.toBe(first.rendered)
    expect(second.rendered.parts[0]!.layer).not.toBe(first.rendered.parts[0]!.layer)
    expect(step(target, second.rendered).rendered).toBe(second.rendered)
  })

  it('reuses the budgeted object for an equal prompt built again', () => {
    const target = budget(25)
    const first = step(target, prompt({ a: {}, b: {}, c: {} }))
    expect(step(target, prompt({ a: {}, b: {}, c: {} })).rendered).toBe(first.rendered)
  })
})

describe('token counting', () => {
  it('counts each distinct part text once across steps', () => {
    const countTokens = vi.fn(countWords)
    const target = budget(100, 0, countTokens)
    step(target, prompt({ a: {}, b: {} }))
    step(target, prompt({ a: {}, b: {} }))
    step(target, prompt({ b: {}, a: {} }))
    expect(countTokens.mock.calls.map(([text]) => text)).toEqual([input('a').text, input('b').text, '\n\n'])
  })

  it('counts only the changed text after an edit', () => {
    const countTokens = vi.fn(countWords)
    const target = budget(100, 0, countTokens)
    step(target, prompt({ a: {}, b: {}, c: {} }))
    countTokens.mockClear()
    step(target, prompt({ a: {}, b: { words: 3 }, c: {} }))
    expect(countTokens.mock.calls).toEqual([[input('b', { words: 3 }).text]])
  })

  it('adds countTokens("\\n\\n") once per separator between kept parts', () => {
    const countTokens = vi.fn((text: string) => (text === '\n\n' ? 1 : countWords(text)))
    const plan = step(budget(100, 0, countTokens), prompt({ a: {}, b: {}, c: {} }))
    expect(plan.promptTokens).toBe(32)
    expect(countTokens.mock.calls.filter(([text]) => text === '\n\n')).toHaveLength(1)
    expect(step(budget(31, 0, countTokens), prompt({ a: {}, b: {}, c: {} })).promptTokens).toBe(21)
  })

  it('drops cached counts for texts no longer in the prompt, keeping withheld ones', () => {
    const target = budget(20)
    step(target, prompt({ a: {}, b: {}, c: {} }))
    expect(target.stats().cachedTexts).toBe(3)
    step(target, prompt({ a: {}, b: { words: 2 } }))
    expect(target.stats().cachedTexts).toBe(2)
  })
})

describe('failures', () => {
  function withheldState(): { target: TokenBudget; rendered: RenderedPrompt; plan: BudgetPlan } {
    const target = budget(20)
    const rendered = prompt({ a: {}, b: {}, c: {} })
    return { target, rendered, plan: step(target, rendered) }
  }

  it('fails naming countTokens and the part when it throws, leaving the state as before', () => {
    let fail = false
    const target = budget(20, 0, (text) => {
      if (fail && text.startsWith('d0')) throw new Error('tokenizer offline')
      return countWords(text)
    })
    const rendered = prompt({ a: {}, b: {}, c: {} })
    const before = step(target, rendered)
    fail = true
    expect(() => target.plan(prompt({ a: { words: 2 }, b: {}, d: {} }))).toThrow(
      'budget countTokens threw for rendered part "d": tokenizer offline; countTokens must return a token count for any text',
    )
    expect(target.withheld).toEqual(['c'])
    expect(target.stats().cachedTexts).toBe(3)
    const again = target.plan(rendered)
    expect(again.rendered).toBe(before.rendered)
    expect(again.withheld).toEqual(['c'])
  })

  it('keeps the thrown error as the cause', () => {
    const reason = new Error('boom')
    const target = budget(20, 0, () => {
      throw reason
    })
    expect(() => target.plan(prompt({ a: {} }))).toThrow(expect.objectContaining({ cause: reason }))
  })

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '3'])('rejects a count of %s naming countTokens and the part', (count) => {
    const target = budget(20, 0, (text) => (text.startsWith('b0') ? (count as number) : countWords(text)))
    expect(() => target.plan(prompt({ a: {}, b: {} }))).toThrow(
      new RegExp(`^budget countTokens returned .* for rendered part "b"; it must return a non-negative finite number of tokens$`),
    )
    expect(target.stats().cachedTexts).toBe(0)
  })

  it('names the separator when its count is bad', () => {
    const target = budget(20, 0, (text) => (text === '\n\n' ? -1 : countWords(text)))
    expect(() => target.plan(prompt({ a: {} }))).toThrow(/^budget countTokens returned number -1 for the part separator "\\n\\n"/)
  })

  it('rejects a prompt with two parts of one name', () => {
    const rendered = buildRenderedPrompt([input('a'), input('a', { words: 3 })])
    expect(() => budget(20).plan(rendered)).toThrow(TypeError)
    expect(() => budget(20).plan(rendered)).toThrow(/^rendered prompt has two parts named "a"; the token budget withholds sections by name/)
  })

  it('rejects a non-finite priority naming the part', () => {
    const rendered = buildRenderedPrompt([input('a', { priority: Number.NaN })])
    expect(() => budget(20).plan(rendered)).toThrow('rendered part "a" priority must be a finite number (got number NaN)')
  })

  it('changes nothing until a plan is committed', () => {
    const { target, rendered, plan } = withheldState()
    const uncommitted = target.plan(prompt({ a: { words: 1 }, b: { words: 1 }, c: {} }))
    expect(uncommitted.withheld).toEqual([])
    expect(target.withheld).toEqual(['c'])
    expect(target.plan(rendered).rendered).toBe(plan.rendered)
  })

  it('rejects a stale plan and a plan committed twice', () => {
    const { target, rendered } = withheldState()
    const first = target.plan(prompt({ a: { words: 1 }, b: {}, c: {} }))
    const second = target.plan(rendered)
    target.commit(second)
    expect(() => target.commit(first)).toThrow(/^budget plan is stale/)
    expect(() => target.commit(second)).toThrow(/^budget plan is stale/)
    expect(target.withheld).toEqual(['c'])
  })

  it('rejects a plan from another budget', () => {
    const { plan } = withheldState()
    expect(() => budget(20).commit(plan)).toThrow(new TypeError("budget commit got a plan this budget did not make; commit the object that this budget's plan() returned"))
  })
})
