/**
 * The options of the cache-preserving token budget (SPEC §5), validated once
 * when the budget is created: a bad budget fails at load, not at the first
 * step.
 */

import { describeValue } from '../assembly/errors.js'

/** What `createStepSurface({ budget })` accepts. */
export interface BudgetOptions {
  /** The most tokens the system prompt may take: a positive finite number. */
  readonly maxTokens: number
  /**
   * Counts the tokens of one text (a part's text, or the blank-line
   * separator); must return a non-negative finite number. Called once per
   * distinct text and cached by text.
   */
  readonly countTokens: (text: string) => number
  /**
   * The fraction of `maxTokens` kept free before a withheld section is
   * restored: it comes back only when the prompt with it fits within
   * `maxTokens × (1 − headroom)`. In [0, 1); default 0.1.
   */
  readonly headroom?: number
  /**
   * How the budget treats the prefix this agent shares with its siblings (the
   * leading sections that neither its own scope supplies nor fill in one of
   * its own variables). `'ignore'` (default): the withhold order looks at
   * priorities and positions only, so it may withhold a shared section in
   * this agent alone, and its prompt stops sharing from there on.
   * `'prefer-unshared'`: every withholdable section after that prefix is
   * withheld before any inside it (each group lowest priority first, later
   * first among equals), so the shared prefix is cut last.
   */
  readonly shared?: BudgetSharing
}

/** The values of `BudgetOptions.shared`. */
export type BudgetSharing = 'ignore' | 'prefer-unshared'

/** `BudgetOptions` after validation, with the default headroom filled in. */
export interface ValidBudgetOptions {
  readonly maxTokens: number
  readonly countTokens: (text: string) => number
  readonly headroom: number
  readonly shared: BudgetSharing
  /** `maxTokens × (1 − headroom)`: a withheld section is restored only if the prompt with it fits in this. */
  readonly restoreTokens: number
}

/** The `headroom` when none is given. */
export const DEFAULT_BUDGET_HEADROOM = 0.1

const KNOWN_KEYS: readonly string[] = ['maxTokens', 'countTokens', 'headroom', 'shared']
const SHARING: readonly BudgetSharing[] = ['ignore', 'prefer-unshared']

/**
 * Checks a budget and returns it frozen with the headroom resolved. Throws a
 * `TypeError` naming the option for a non-object budget, an unknown key, a
 * non-positive or non-finite `maxTokens`, a `countTokens` that is not a
 * function, a `headroom` outside [0, 1), or a `shared` other than `'ignore'`
 * and `'prefer-unshared'`.
 */
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
