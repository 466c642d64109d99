/**
 * The step surface's token figures and expected cache reuse, and the checked counts and exact sums the budget shares.
 * The budget's rule: k parts cost their counts plus k − 1 separator counts, each text counted on its own.
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import { describeValue } from '../assembly/errors.js'
import type { BudgetPlan } from './budget.js'
import type { CacheRules } from './cache-rules.js'
import type { StepResult } from './step-result.js'

/** Who counts for the budget, as its errors name it. */
export const BUDGET_COUNTER = 'budget countTokens'
const OPTION_COUNTER = 'createStepSurface option "countTokens"'

/** `countTokens(text)`, checked: a throw or a bad count becomes an error naming `who` and `subject` (what was counted). */
export function countWith(countTokens: CountTokens, text: string, who: string, subject: string): number {
  let value: unknown
  try {
    value = countTokens(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`${who} threw for ${subject}: ${reason}; countTokens must return a token count for any text`, { cause: error })
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(
      who === BUDGET_COUNTER
        ? `${who} returned ${describeValue(value)} for ${subject}; it must return a non-negative finite number of tokens`
        : `${who} must return a non-negative finite number (got ${describeValue(value)}) for ${subject}`,
    )
  }
  return value
}

/**
 * An exact running total of token counts, which may be fractions (a float total would drift: all withheld would read a
 * residue, not 0), kept as an expansion of non-overlapping terms by increasing magnitude. `value` rounds it once, ties to even.
 */
export class TokenSum {
  readonly #terms: number[] = []

  add(count: number): void {
    const terms = this.#terms
    let x = count
    let kept = 0
    // Two-sum each term into x: hi is their rounded sum, lo its exact error, so x + the kept terms stays the exact total.
    for (let i = 0; i < terms.length; i++) {
      let y = terms[i]!
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x]
      const hi = x + y
      const lo = y - (hi - x)
      if (lo !== 0) terms[kept++] = lo
      x = hi
    }
    terms.length = kept
    terms.push(x)
  }

  get value(): number {
    const terms = this.#terms
    let n = terms.length
    if (n === 0) return 0
    // Add the terms from the largest down until a rounding error appears.
    let hi = terms[--n]!
    let lo = 0
    while (n > 0) {
      const x = hi
      const y = terms[--n]!
      hi = x + y
      lo = y - (hi - x)
      if (lo !== 0) break
    }
    // A result exactly halfway rounded to even; the terms below decide whether the exact total lies above or below it.
    if (n > 0 && ((lo < 0 && terms[n - 1]! < 0) || (lo > 0 && terms[n - 1]! > 0))) {
      const y = lo * 2
      const x = hi + y
      if (y === x - hi) hi = x
    }
    return hi
  }
}

/** The exact total of the first `length` of `counts` with `separator` between each two. Throws what `addSafely` throws. */
export function promptTokenSum(counts: readonly number[], separator: number, length = counts.length): TokenSum {
  const total = new TokenSum()
  for (let i = 0; i < length; i++) {
    if (i > 0) addSafely(total, separator)
    addSafely(total, counts[i]!)
  }
  return total
}

/** Adds the budget's `count` to `total`; throws a `RangeError` past `Number.MAX_SAFE_INTEGER`, where counts stop being exact. */
function addSafely(total: TokenSum, count: number): void {
  total.add(count)
  if (total.value <= Number.MAX_SAFE_INTEGER) return
  throw new RangeError(
    `${BUDGET_COUNTER} counts add up to ${total.value} tokens for this prompt, past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); ` +
      'countTokens must return token counts whose sum stays a safe integer',
  )
}

type TokenFigures = Required<Pick<StepResult, 'stablePrefixTokens' | 'reusablePrefixTokens' | 'promptTokens'>>
type CountTokens = (text: string) => number

/** What one step hands the counter; `fresh`: nothing is reusable (the first step, or tools or config changed). */
interface CountedStep {
  readonly plan: BudgetPlan | undefined
  readonly rendered: RenderedPrompt
  /** UTF-16 code units identical to the previous step's prompt, whole code points only, and of those the reusable ones. */
  readonly stableLength: number
  readonly reusableLength: number
  readonly fresh: boolean
  readonly toolsJson: string
}

/** The token figures and expected cache reuse of one surface's steps. */
export class StepCounts {
  readonly #count: CountTokens | undefined
  /** Who `#count` is, as errors name it; the budget's figures always name the budget's. */
  readonly #who: string
  readonly #fromBudget: boolean
  #memo: { readonly text: string; readonly tokens: number } | undefined
  /** What the next step's expectation compares with: where this step's marked blocks end, and the last tools count. */
  #expectation = { markedEnds: [] as readonly number[], toolsJson: undefined as string | undefined, toolsTokens: 0 }

  constructor(countTokens?: CountTokens, budgetCount?: CountTokens, private readonly rules?: CacheRules) {
    this.#count = countTokens ?? budgetCount
    this.#who = countTokens === undefined ? BUDGET_COUNTER : OPTION_COUNTER
    this.#fromBudget = budgetCount !== undefined && (countTokens === undefined || countTokens === budgetCount)
  }

  /** The step's fields, and the commit that keeps its memos once the step succeeded. Throws what `countWith` throws. */
  measure(step: CountedStep) {
    let tokens: TokenFigures | undefined
    let memo = this.#memo
    if (this.#count !== undefined) {
      const [stable, promptTokens] = this.#fromBudget ? this.#budgetFigures(step) : this.#textFigures(step)
      tokens = { stablePrefixTokens: stable, reusablePrefixTokens: step.reusableLength === 0 ? 0 : stable, promptTokens }
      if (!this.#fromBudget) memo = { text: step.rendered.text, tokens: promptTokens }
    }
    const expected = this.rules === undefined ? undefined : this.#expect(step, tokens!, this.rules)
    return {
      fields: { ...tokens, ...(this.#fromBudget ? { partTokens: step.plan!.partTokens } : {}), ...expected?.fields },
      commit: () => {
        this.#memo = memo
        if (expected !== undefined) this.#expectation = expected.next
      },
    }
  }

  /** The stable prefix's and the prompt's tokens by the budget's rule. */
  #budgetFigures({ plan, stableLength }: CountedStep): [stable: number, prompt: number] {
    const { rendered, partTokens, separatorTokens, promptTokens } = plan!
    if (stableLength >= rendered.text.length) return [promptTokens, promptTokens]
    const { parts } = rendered
    // The parts wholly in the prefix, then the slice of part i (or of the separator before it) up to stableLength,
    // counted on its own and never cached: it differs whenever the prefix moves.
    const i = parts.findIndex((part) => part.end > stableLength)
    const sum = promptTokenSum(partTokens, separatorTokens, i)
    const end = i === 0 ? 0 : parts[i - 1]!.end
    if (stableLength > end) {
      const subject = `the stable prefix's end in rendered part "${parts[i]!.name}"`
      addSafely(sum, countWith(this.#count!, rendered.text.slice(end, stableLength), BUDGET_COUNTER, subject))
    }
    return [sum.value, promptTokens]
  }

  /** `countTokens` of the stable prefix and of the whole text, the last prompt's count reused. */
  #textFigures({ rendered: { text }, stableLength: end }: CountedStep): [stable: number, prompt: number] {
    const count = (slice: string, subject: string): number => countWith(this.#count!, slice, OPTION_COUNTER, subject)
    const stable = end === 0 || end === text.length ? 0 : count(text.slice(0, end), 'the stable prefix')
    const prompt = text.length === 0 ? 0 : this.#memo?.text === text ? this.#memo.tokens : count(text, 'the rendered prompt')
    return [end === text.length ? prompt : stable, prompt]
  }

  /**
   * The step's expected cache reuse by the provider's rules (SPEC §4.3), and the state to keep if the step succeeds:
   *
   *   first step, tools or config changed   0
   *   breakpoints (Anthropic)               tokens through the end of the last marked block that lies
   *                                         wholly in the identical prefix and was marked at the same
   *                                         place last step (only such a prefix was written); else 'no-breakpoint'
   *   no breakpoints (OpenAI, DeepSeek)     reusable tokens rounded down to the granularity
   *   tools' tokens + those < minimumTokens 0, 'below-minimum'
   */
  #expect({ rendered, fresh, stableLength, toolsJson }: CountedStep, figures: TokenFigures, rules: CacheRules) {
    const count = (text: string, subject: string): number => countWith(this.#count!, text, this.#who, subject)
    const state = this.#expectation
    // A block ends where its last part does.
    let partCount = 0
    const markedEnds = rendered.blocks.flatMap((block) => {
      partCount += block.parts.length
      return rules.breakpoints && block.cacheBreakpoint ? [rendered.parts[partCount - 1]!.end] : []
    })
    const toolsTokens = toolsJson === state.toolsJson ? state.toolsTokens : count(toolsJson, 'the tools (JSON.stringify(tools))')
    const next = { markedEnds, toolsJson, toolsTokens }
    if (fresh || figures.reusablePrefixTokens === 0) return { fields: { expectedCachedTokens: 0 }, next }
    let tokens = Math.floor(figures.reusablePrefixTokens / rules.granularity) * rules.granularity
    if (rules.breakpoints) {
      const end = markedEnds.findLast((candidate) => candidate <= stableLength && state.markedEnds.includes(candidate))
      if (end === undefined) return { fields: { expectedCachedTokens: 0, cacheNote: 'no-breakpoint' as const }, next }
      if (end === stableLength) tokens = figures.stablePrefixTokens
      else if (end === rendered.text.length) tokens = figures.promptTokens
      else tokens = count(rendered.text.slice(0, end), 'the prompt through its last cached block')
    }
    if (toolsTokens + tokens >= rules.minimumTokens) return { fields: { expectedCachedTokens: tokens }, next }
    return { fields: { expectedCachedTokens: 0, cacheNote: 'below-minimum' as const }, next }
  }
}
