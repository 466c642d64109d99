/**
 * Exact sums of token counts for the token budget. A tokenizer may return
 * fractions (a characters-times-ratio estimate does), and a running total that
 * adds and subtracts them in floating point drifts: the prompt left after
 * withholding every section would read a rounding residue instead of 0, and a
 * prompt that fits could be read as just over `maxTokens`. `TokenSum` keeps
 * the exact total instead, so integer counts add as integers and fractional
 * ones round once, when the total is read.
 */

/**
 * An exact running total of token counts: `add` and `subtract` never lose a
 * bit, and `value` is the exact total rounded once to the nearest number
 * (ties to even). The total is held as an expansion: numbers of increasing
 * magnitude whose bits do not overlap and whose exact sum is the total.
 * Callers keep every count and the total within `Number.MAX_SAFE_INTEGER`
 * (see `promptTokenSum`), so nothing overflows.
 */
export class TokenSum {
  readonly #terms: number[] = []

  /** Adds `count` (a finite number) exactly. */
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

  /** Subtracts `count` exactly. */
  subtract(count: number): void {
    this.add(-count)
  }

  /** The exact total, rounded once. */
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

/**
 * The exact total of `counts` plus `separator` once between each two of them
 * (the budget's count rule), as a `TokenSum` to withhold parts from. Throws a
 * `RangeError` naming `who` (the `countTokens` in charge) when a count or the
 * total passes `Number.MAX_SAFE_INTEGER`, where token counts stop being exact
 * integers.
 */
export function promptTokenSum(counts: readonly number[], separator: number, who: string): TokenSum {
  const total = new TokenSum()
  // Checked after every addition, so no intermediate total can overflow.
  const add = (count: number): void => {
    total.add(count)
    checkSafeTotal(total.value, who)
  }
  for (let i = 0; i < counts.length; i++) {
    if (i > 0) add(separator)
    add(counts[i]!)
  }
  return total
}

/** Throws a `RangeError` naming `who` when `total` passes `Number.MAX_SAFE_INTEGER`. */
export function checkSafeTotal(total: number, who: string): void {
  if (total <= Number.MAX_SAFE_INTEGER) return
  throw new RangeError(
    `${who} counts add up to ${total} tokens for this prompt, past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); ` +
      'countTokens must return token counts whose sum stays a safe integer',
  )
}
