/** The options of the token budget (SPEC §5) and their validation. */

import { describeValue } from '../assembly/errors.js'

/** What `createStepSurface({ budget })` accepts. */
export interface BudgetOptions {
  /** The most tokens the system prompt may take: a positive finite number. */
  readonly maxTokens: number
  /** Counts the tokens of one text (a part's, or the blank-line separator): a non-negative finite number; cached by text. */
  readonly countTokens: (text: string) => number
  /** The fraction of `maxTokens` kept free before a withheld section is restored. In [0, 1); default 0.1. */
  readonly headroom?: number
  /** `'prefer-unshared'` withholds every section after the prefix shared with sibling agents first; default `'ignore'`. */
  readonly shared?: BudgetSharing
}

/** The values of `BudgetOptions.shared`. */
export type BudgetSharing = 'ignore' | 'prefer-unshared'

/** The `headroom` when none is given. */
export const DEFAULT_BUDGET_HEADROOM = 0.1

/** `BudgetOptions` after validation, with the default headroom filled in. */
export interface ValidBudgetOptions extends Required<BudgetOptions> {
  /** `maxTokens × (1 − headroom)`: a withheld section is restored only if the prompt with it fits in this. */
  readonly restoreTokens: number
}

const KNOWN_KEYS: readonly string[] = ['maxTokens', 'countTokens', 'headroom', 'shared']
const SHARING: readonly BudgetSharing[] = ['ignore', 'prefer-unshared']

/** Checks a budget and returns it frozen with the headroom resolved. Throws a `TypeError` naming a bad or unknown option. */
export function validateBudgetOptions(options: unknown): ValidBudgetOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`budget must be an object { maxTokens, countTokens, headroom?, shared? } (got ${describeValue(options)})`)
  }
  const record = options as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!KNOWN_KEYS.includes(key)) {
      throw new TypeError(`unknown budget option "${key}"; known options: ${KNOWN_KEYS.join(', ')}`)
    }
  }
  const { maxTokens, countTokens, headroom = DEFAULT_BUDGET_HEADROOM, shared = 'ignore' } = record
  if (typeof maxTokens !== 'number' || !Number.isFinite(maxTokens) || maxTokens <= 0) {
    throw new TypeError(
      `budget option "maxTokens" must be a positive finite number (got ${describeValue(maxTokens)}); give the model's prompt budget in tokens`,
    )
  }
  if (typeof countTokens !== 'function') {
    throw new TypeError(
      `budget option "countTokens" must be a function (text) => number (got ${describeValue(countTokens)}); pass your model's tokenizer, e.g. countTokens from gpt-tokenizer`,
    )
  }
  if (typeof headroom !== 'number' || !Number.isFinite(headroom) || headroom < 0 || headroom >= 1) {
    throw new TypeError(
      `budget option "headroom" must be a number in [0, 1) (got ${describeValue(headroom)}); it is the fraction of maxTokens kept free before a withheld section is restored`,
    )
  }
  if (!SHARING.includes(shared as BudgetSharing)) {
    throw new TypeError(
      `budget option "shared" must be ${SHARING.map((value) => `"${value}"`).join(' or ')} (got ${describeValue(shared)}); "prefer-unshared" withholds sections outside the prefix shared with sibling agents first`,
    )
  }
  return Object.freeze({
    maxTokens,
    countTokens: countTokens as (text: string) => number,
    headroom,
    shared: shared as BudgetSharing,
    restoreTokens: maxTokens * (1 - headroom),
  })
}
