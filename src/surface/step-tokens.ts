/**
 * The step surface's token figures (`stablePrefixTokens`,
 * `reusablePrefixTokens`, `promptTokens`), by one of two rules:
 *
 *   with a budget whose countTokens does the counting   the budget's count rule:
 *     the sent parts' cached counts plus one separator count between parts,
 *     summed exactly (budget-sum.ts);
 *     the stable prefix is the parts that lie wholly in it, plus a count of
 *     the rest of it (a slice of the first changed part), so a steady step
 *     tokenizes nothing and a changed step only that short slice
 *   otherwise (a `countTokens` option alone, or one that is not the budget's)
 *     countTokens of the joined texts: the stable prefix, and the whole prompt
 *     unless it is all stable; the last prompt's count is reused while its
 *     text stays the same
 *
 * Pure: each function returns the figures and, where there is one, the memo
 * to keep; the surface keeps it only when the whole step succeeded.
 */

import { describeValue } from '../assembly/errors.js'
import type { BudgetPlan } from './budget.js'
import { checkSafeTotal, TokenSum } from './budget-sum.js'

/** One step's token figures. */
export interface TokenFigures {
  readonly stablePrefixTokens: number
  readonly reusablePrefixTokens: number
  readonly promptTokens: number
}

/** The last prompt text counted by the joined-text rule, and its count. */
export interface PromptCountMemo {
  readonly text: string
  readonly tokens: number
}

const BUDGET = 'budget countTokens'

/** Calls `countTokens`, failing with an error naming `who` and `subject` for a throw or a bad count. */
function checked(countTokens: (text: string) => number, text: string, who: string, subject: string): number {
  let value: unknown
  try {
    value = countTokens(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`${who} threw for ${subject}: ${reason}; countTokens must return a token count for any text`, { cause: error })
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    // The budget's wording (as in token-counts.ts), or the countTokens option's.
    throw new TypeError(
      who === BUDGET
        ? `${who} returned ${describeValue(value)} for ${subject}; it must return a non-negative finite number of tokens`
        : `${who} must return a non-negative finite number (got ${describeValue(value)}) for ${subject}`,
    )
  }
  return value
}

/**
 * The figures of a budgeted step by the budget's count rule. `stableLength`
 * and `reusableLength` are UTF-16 offsets into `plan.rendered.text`; the part
 * of the stable prefix past the last whole part is counted on its own (once,
 * never cached: it is a different slice whenever the prefix moves).
 */
export function budgetFigures(
  plan: BudgetPlan,
  countTokens: (text: string) => number,
  stableLength: number,
  reusableLength: number,
): TokenFigures {
  const { rendered, partTokens, separatorTokens, promptTokens } = plan
  let stable: number
  if (stableLength >= rendered.text.length) stable = promptTokens
  else {
    const { parts } = rendered
    const sum = new TokenSum()
    let end = 0
    let i = 0
    for (; i < parts.length && parts[i]!.end <= stableLength; i++) {
      if (i > 0) sum.add(separatorTokens)
      sum.add(partTokens[i]!)
      end = parts[i]!.end
    }
    if (stableLength > end) {
      const subject = `the stable prefix's end in rendered part "${parts[i]?.name ?? parts[i - 1]!.name}"`
      sum.add(checked(countTokens, rendered.text.slice(end, stableLength), BUDGET, subject))
    }
    stable = sum.value
    checkSafeTotal(stable, BUDGET)
  }
  return { stablePrefixTokens: stable, reusablePrefixTokens: reusableLength === 0 ? 0 : stable, promptTokens }
}

/**
 * The figures by counting the joined texts with the surface's `countTokens`
 * option, and the memo to keep: `memo` (the last committed prompt's count) is
 * reused when `text` equals its text.
 */
export function textFigures(
  countTokens: (text: string) => number,
  text: string,
  stableLength: number,
  reusableLength: number,
  memo: PromptCountMemo | undefined,
): { readonly figures: TokenFigures; readonly memo: PromptCountMemo } {
  const who = 'createStepSurface option "countTokens"'
  const whole = (): number => (memo !== undefined && memo.text === text ? memo.tokens : checked(countTokens, text, who, 'the rendered prompt'))
  let stablePrefixTokens: number
  let promptTokens: number
  if (stableLength === text.length) {
    promptTokens = stablePrefixTokens = text.length === 0 ? 0 : whole()
  } else {
    stablePrefixTokens = stableLength === 0 ? 0 : checked(countTokens, text.slice(0, stableLength), who, 'the stable prefix')
    promptTokens = whole()
  }
  return {
    figures: { stablePrefixTokens, reusablePrefixTokens: reusableLength === 0 ? 0 : stablePrefixTokens, promptTokens },
    memo: { text, tokens: promptTokens },
  }
}
