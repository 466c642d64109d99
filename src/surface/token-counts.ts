/**
 * Token counts for the budget, cached by part text, and their exact sums. The count rule: k parts
 * cost their counts plus (k − 1) separator counts, each text counted on its own.
 */

import { PART_SEPARATOR, type RenderedPart } from '../render/rendered-prompt.js'
import { describeValue } from '../assembly/errors.js'

/** The counts of one prompt (`counts[i]` of `parts[i].text`), ready for `adopt`. */
export interface MeasuredPrompt {
  readonly parts: readonly RenderedPart[]
  readonly counts: readonly number[]
  readonly separator: number
}

/** The committed token-count cache: the texts of the last committed prompt and the separator. */
export class TokenCounts {
  readonly #count: (text: string) => number
  #cache = new Map<string, number>()
  #separator: number | undefined

  constructor(countTokens: (text: string) => number) {
    this.#count = countTokens
  }

  /** Distinct part texts cached (the separator not included). */
  get size(): number {
    return this.#cache.size
  }

  /** Counts `parts`, calling `countTokens` once per text the cache lacks; the cache stays. Throws what `countWith` throws. */
  measure(parts: readonly RenderedPart[]): MeasuredPrompt {
    const fresh = new Map<string, number>()
    const counts = parts.map((part) => {
      let count = this.#cache.get(part.text) ?? fresh.get(part.text)
      if (count === undefined) fresh.set(part.text, (count = this.#call(part.text, `rendered part "${part.name}"`)))
      return count
    })
    const separator = this.#separator ?? this.#call(PART_SEPARATOR, 'the part separator "\\n\\n"')
    return { parts, counts, separator }
  }

  /** Commits `measured`: the cache then holds exactly that prompt's texts, so it is bounded by the prompt. */
  adopt(measured: MeasuredPrompt): void {
    this.#separator = measured.separator
    this.#cache = new Map(measured.parts.map((part, i) => [part.text, measured.counts[i]!]))
  }

  #call(text: string, subject: string): number {
    return countWith(this.#count, text, BUDGET_COUNTER, subject)
  }
}

/** Who counts for the budget, as its errors name it. */
export const BUDGET_COUNTER = 'budget countTokens'

/** `countTokens(text)`, checked: a throw or a bad count becomes an error naming `who` and `subject` (what was counted). */
export function countWith(countTokens: (text: string) => number, text: string, who: string, subject: string): number {
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
 * An exact running total of token counts, which may be fractions: a float total would drift (everything
 * withheld would read a residue, not 0). `value` rounds the exact total once (ties to even). The total
 * is an expansion: terms of increasing magnitude whose bits do not overlap.
 */
export class TokenSum {
  readonly #terms: number[] = []

  add(count: number): void {
    const terms = this.#terms
    let x = count
    let kept = 0
    // Two-sum each term into x: hi is their rounded sum and lo the exact
    // rounding error, so x + (the kept terms) still equals the exact total.
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

  subtract(count: number): void {
    this.add(-count)
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
    // A result exactly halfway rounded to even; the terms below decide
    // whether the exact total lies above or below that half.
    if (n > 0 && ((lo < 0 && terms[n - 1]! < 0) || (lo > 0 && terms[n - 1]! > 0))) {
      const y = lo * 2
      const x = hi + y
      if (y === x - hi) hi = x
    }
    return hi
  }
}

/** The exact total of `counts` with `separator` between each two. Throws what `addSafely` throws. */
export function promptTokenSum(counts: readonly number[], separator: number, who: string): TokenSum {
  const total = new TokenSum()
  for (let i = 0; i < counts.length; i++) {
    if (i > 0) addSafely(total, separator, who)
    addSafely(total, counts[i]!, who)
  }
  return total
}

/** Adds `count` to `total`; throws a `RangeError` naming `who` past `Number.MAX_SAFE_INTEGER`, where counts stop being exact. */
export function addSafely(total: TokenSum, count: number, who: string): void {
  total.add(count)
  if (total.value <= Number.MAX_SAFE_INTEGER) return
  throw new RangeError(
    `${who} counts add up to ${total.value} tokens for this prompt, past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); ` +
      'countTokens must return token counts whose sum stays a safe integer',
  )
}
