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
  /** Texts counted for this prompt that the committed cache did not hold. */
  readonly fresh: ReadonlyMap<string, number> | undefined
  /** The committed prompt had exactly these part texts, in this order (nothing to adopt). */
  readonly unchanged: boolean
}

/** The committed token-count cache: the texts of the last committed prompt and the separator. */
export class TokenCounts {
  readonly #count: (text: string) => number
  #cache = new Map<string, number>()
  #parts: readonly RenderedPart[] = []
  #counts: readonly number[] = []
  #separator: number | undefined

  constructor(countTokens: (text: string) => number) {
    this.#count = countTokens
  }

  /** How many distinct part texts the cache holds (the separator not included). */
  get size(): number {
    return this.#cache.size
  }

  /**
   * Counts `parts`: a text at the same position as in the committed prompt
   * reuses its count, another text is looked up in the cache, and only a new
   * text calls `countTokens` (once per distinct text). Throws naming
   * `countTokens` and the part when it throws or returns a bad count; the
   * cache is never changed here.
   */
  measure(parts: readonly RenderedPart[]): MeasuredPrompt {
    const previous = this.#parts
    let counts: number[] | undefined
    let fresh: Map<string, number> | undefined
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (counts === undefined) {
        if (i < previous.length && previous[i]!.text === part.text) continue
        counts = this.#counts.slice(0, i)
      }
      let count = this.#cache.get(part.text) ?? fresh?.get(part.text)
      if (count === undefined) {
        count = this.#call(part.text, `rendered part "${part.name}"`)
        ;(fresh ??= new Map()).set(part.text, count)
      }
      counts.push(count)
    }
    const unchanged = counts === undefined && parts.length === previous.length
    const separator = this.#separator ?? this.#call(PART_SEPARATOR, 'the part separator "\\n\\n"')
    return { parts, counts: counts ?? (unchanged ? this.#counts : this.#counts.slice(0, parts.length)), separator, fresh, unchanged }
  }

  /**
   * Commits `measured`: the cache then holds exactly the texts of that prompt
   * (entries for texts no longer in the prompt are dropped, so the cache is
   * bounded by the prompt), plus the separator's count.
   */
  adopt(measured: MeasuredPrompt): void {
    this.#separator = measured.separator
    if (measured.unchanged) return
    const cache = new Map<string, number>()
    for (let i = 0; i < measured.parts.length; i++) cache.set(measured.parts[i]!.text, measured.counts[i]!)
    this.#cache = cache
    this.#parts = measured.parts
    this.#counts = measured.counts
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
