/**
 * Per-part token counts for the token budget, cached by part text so an
 * unchanged prompt is never tokenized again. The count rule: a prompt of k
 * parts costs the sum of its parts' counts plus (k − 1) times the count of
 * the blank-line separator, each text counted on its own. A tokenizer may
 * merge tokens across a part boundary, so this can differ from counting the
 * joined text by a token or so per separator; the budget decides on this sum.
 *
 *   measure(parts)  reads the committed cache, counts only new texts, changes nothing
 *   adopt(measured) makes it the committed cache, holding only that prompt's texts
 */

import { PART_SEPARATOR, type RenderedPart } from '../render/rendered-prompt.js'
import { describeValue } from '../assembly/errors.js'

/** The counts of one prompt, ready for `adopt`. */
export interface MeasuredPrompt {
  /** The parts measured, in prompt order. */
  readonly parts: readonly RenderedPart[]
  /** `counts[i]` is the token count of `parts[i].text`. */
  readonly counts: readonly number[]
  /** The token count of the blank-line separator. */
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

  /** How many distinct part texts the cache holds (the separator not included). */
  get size(): number {
    return this.#cache.size
  }

  /**
   * Counts `parts`: a text the committed cache holds reuses its count, and
   * only a new text calls `countTokens` (once per distinct text). Throws
   * naming `countTokens` and the part when it throws or returns a bad count;
   * the cache is never changed here.
   */
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

  /**
   * Commits `measured`: the cache then holds exactly the texts of that prompt
   * (so it is bounded by the prompt), plus the separator's count.
   */
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

/**
 * `countTokens(text)`, checked: a throw becomes an error naming `who` and
 * `subject` (what was counted), and a result that is not a non-negative
 * finite number a `TypeError` naming them.
 */
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
