/** The cache-preserving token budget (SPEC §5), planned and committed in two phases: a step that fails leaves it untouched. */

import { describeValue, optionError } from '../assembly/errors.js'
import { PART_SEPARATOR, type RenderedPart, type RenderedPrompt } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'
import {
  budgetWarnings, checkParts, keptPrompt, LAYOUT_FIELDS, sameFields, samePrompt, sharedPrefixCount, withholdOrder,
} from './budget-parts.js'
import { BUDGET_COUNTER, countWith, promptTokenSum } from './step-tokens.js'

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

/** `BudgetOptions` with the default headroom filled in; `restoreTokens` is `maxTokens × (1 − headroom)`. */
export type ValidBudgetOptions = Required<BudgetOptions> & { readonly restoreTokens: number }

const KNOWN_KEYS: readonly string[] = ['maxTokens', 'countTokens', 'headroom', 'shared']
const SHARING: readonly BudgetSharing[] = ['ignore', 'prefer-unshared']

/** Checks a budget and returns it frozen with the headroom resolved. Throws a `TypeError` naming a bad or unknown option. */
export function validateBudgetOptions(options: unknown): ValidBudgetOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`budget must be an object { maxTokens, countTokens, headroom?, shared? } (got ${describeValue(options)})`)
  }
  const unknown = Object.keys(options).find((key) => !KNOWN_KEYS.includes(key))
  if (unknown !== undefined) throw new TypeError(`unknown budget option "${unknown}"; known options: ${KNOWN_KEYS.join(', ')}`)
  const { maxTokens, countTokens, headroom = DEFAULT_BUDGET_HEADROOM, shared = 'ignore' } = options as Record<string, unknown>
  if (typeof maxTokens !== 'number' || !Number.isFinite(maxTokens) || maxTokens <= 0) {
    throw optionError('budget', 'maxTokens', 'a positive finite number', maxTokens, "; give the model's prompt budget in tokens")
  }
  if (typeof countTokens !== 'function') {
    const hint = "pass your model's tokenizer, e.g. countTokens from gpt-tokenizer"
    throw optionError('budget', 'countTokens', 'a function (text) => number', countTokens, `; ${hint}`)
  }
  if (typeof headroom !== 'number' || !Number.isFinite(headroom) || headroom < 0 || headroom >= 1) {
    const hint = 'it is the fraction of maxTokens kept free before a withheld section is restored'
    throw optionError('budget', 'headroom', 'a number in [0, 1)', headroom, `; ${hint}`)
  }
  if (!SHARING.includes(shared as BudgetSharing)) {
    const hint = '"prefer-unshared" withholds sections outside the prefix shared with sibling agents first'
    throw optionError('budget', 'shared', SHARING.map((value) => `"${value}"`).join(' or '), shared, `; ${hint}`)
  }
  const valid = { maxTokens, countTokens: countTokens as (text: string) => number, headroom, shared: shared as BudgetSharing }
  return Object.freeze({ ...valid, restoreTokens: maxTokens * (1 - headroom) })
}

/** A budget finding for the step result's warnings. */
export interface BudgetWarning {
  /** Sections newly withheld, sent again, or the prompt over `maxTokens` with all withholdable ones withheld (every step). */
  readonly kind: 'withheld' | 'restored' | 'over-budget'
  /** The sections concerned, in prompt order (for `'over-budget'`: all withheld ones). */
  readonly sections: readonly string[]
  /** A human-readable explanation with the remedy. */
  readonly message: string
}

/**
 * One step's budget decision, adopted by `commit`: `rendered` is the input itself when nothing is withheld, `withheld`
 * is in prompt order, `promptTokens` follows the count rule and `partTokens[i]` counts `rendered.parts[i]`.
 */
export interface BudgetPlan {
  readonly rendered: RenderedPrompt
  readonly withheld: readonly string[]
  readonly overBudget: boolean
  readonly promptTokens: number
  readonly partTokens: readonly number[]
  readonly separatorTokens: number
  readonly warnings: readonly BudgetWarning[]
}

/** What a plan adopts on commit; `counts[i]` counts `input.parts[i]` (absent when the plan repeats the committed one). */
interface Decision {
  readonly input: RenderedPrompt | undefined
  readonly withheld: ReadonlySet<string>
  readonly order: readonly number[]
  readonly sharedCount: number
  /** The scope that decided `order` and `sharedCount`. */
  readonly own: ScopeKey | undefined
  readonly counts?: readonly number[]
  readonly separator?: number
  /** The plan committed when this one was made: a later commit makes it stale. */
  readonly base?: BudgetPlan
}

const NO_DECISION: Decision = { input: undefined, withheld: new Set(), order: [], sharedCount: 0, own: undefined }

/** The stateful budget of one step surface. The constructor throws what `validateBudgetOptions` throws. */
export class TokenBudget {
  readonly #options: ValidBudgetOptions
  /** What each plan would commit; keyed by the plan so a forged or foreign plan is rejected. */
  readonly #plans = new WeakMap<BudgetPlan, Decision>()
  /** The last committed plan; its decision is the state the next plan starts from. */
  #last: BudgetPlan | undefined
  /** Token counts of the last committed prompt's texts, so the cache is bounded by the prompt, and of the separator. */
  #cache = new Map<string, number>()
  #separator: number | undefined

  constructor(options: BudgetOptions) {
    this.#options = validateBudgetOptions(options)
  }

  /** The withheld names after the last commit, in that prompt's order. */
  get withheld(): readonly string[] {
    return this.#last?.withheld ?? []
  }

  /** `cachedTexts`: distinct part texts whose token count is cached (those of the last committed prompt). */
  stats(): { readonly cachedTexts: number } {
    return { cachedTexts: this.#cache.size }
  }

  /**
   * Decides without changing any state. Throws a `TypeError` for duplicate part names or a non-finite priority,
   * and what `countWith` and `promptTokenSum` throw. `own`, the agent's scope, ends the shared prefix.
   */
  plan(rendered: RenderedPrompt, own?: ScopeKey): BudgetPlan {
    const last = this.#last
    const before = last === undefined ? NO_DECISION : this.#plans.get(last)!
    const scope = this.#options.shared === 'prefer-unshared' ? own : undefined
    // The committed input again, or an equal one: the decision is a function of (withheld set, prompt, scope), a fixed point.
    if (last !== undefined && scope === before.own && samePrompt(rendered, before.input!)) {
      const warnings = last.warnings.filter((warning) => warning.kind === 'over-budget')
      const output = last.withheld.length === 0 ? rendered : last.rendered
      const plan: BudgetPlan = Object.freeze({ ...last, rendered: output, warnings: Object.freeze(warnings) })
      this.#plans.set(plan, { ...before, input: rendered, counts: undefined, base: last })
      return plan
    }
    const parts = rendered.parts
    const sharedCount = scope === undefined ? parts.length : sharedPrefixCount(rendered, scope)
    const sameLayout = before.input !== undefined && sameFields(parts, before.input.parts, LAYOUT_FIELDS)
    if (!sameLayout) checkParts(parts)
    const { counts, separator } = this.#measure(parts)
    const { maxTokens, restoreTokens } = this.#options
    const order = sameLayout && sharedCount === before.sharedCount ? before.order : withholdOrder(parts, sharedCount)

    // Sticky: the withheld set is the order's prefix through the last name still withheld.
    let k = order.length
    while (k > 0 && !before.withheld.has(parts[order[k - 1]!]!.name)) k--
    const tokens = promptTokenSum(counts, separator)
    const out = new Uint8Array(parts.length)
    let kept = parts.length
    const withhold = (i: number): void => {
      out[i] = 1
      kept--
      tokens.add(-counts[i]!)
      if (kept > 0) tokens.add(-separator)
    }
    for (let rank = 0; rank < k; rank++) withhold(order[rank]!)

    while (tokens.value > maxTokens && k < order.length) withhold(order[k++]!)
    const overBudget = tokens.value > maxTokens
    // Restoring never undoes this step's withholding: the part withheld last did not fit maxTokens, nor the lower threshold.
    while (!overBudget && k > 0) {
      const i = order[k - 1]!
      out[i] = 0
      if (kept > 0) tokens.add(separator)
      tokens.add(counts[i]!)
      kept++
      if (tokens.value > restoreTokens) {
        withhold(i)
        break
      }
      k--
    }
    const promptTokens = tokens.value

    const sent = (_: unknown, i: number): boolean => out[i] === 0
    const withheld = parts.filter((part, i) => !sent(part, i)).map((part) => part.name)
    const output = withheld.length === 0 ? rendered : keptPrompt(parts.filter(sent), rendered.variables, last?.rendered)
    const restored = parts.filter((part, i) => sent(part, i) && before.withheld.has(part.name)).map((part) => part.name)
    const plan: BudgetPlan = Object.freeze({
      rendered: output,
      withheld: Object.freeze(withheld),
      overBudget,
      promptTokens,
      partTokens: Object.freeze(counts.filter(sent)),
      separatorTokens: separator,
      warnings: Object.freeze(budgetWarnings(this.#options, before.withheld, withheld, restored, overBudget, promptTokens)),
    })
    const decision = { input: rendered, withheld: new Set(withheld), order, sharedCount, own: scope, counts, separator }
    this.#plans.set(plan, { ...decision, base: last })
    return plan
  }

  /** Adopts `plan`. Throws a `TypeError` for a plan this budget did not make, an `Error` for a stale one. */
  commit(plan: BudgetPlan): void {
    const decision = this.#plans.get(plan)
    if (decision === undefined) {
      throw new TypeError('budget commit got a plan this budget did not make; commit the object that this budget\'s plan() returned')
    }
    if (decision.base !== this.#last) {
      throw new Error(
        'budget plan is stale: it was committed already or another plan was committed after it was made; plan the step again and commit that plan',
      )
    }
    const { counts, input } = decision
    if (counts !== undefined) {
      this.#separator = decision.separator
      this.#cache = new Map(input!.parts.map((part, i) => [part.text, counts[i]!]))
    }
    this.#last = plan
  }

  /** Counts `parts`, calling `countTokens` once per text the cache lacks; the cache stays. Throws what `countWith` throws. */
  #measure(parts: readonly RenderedPart[]): { readonly counts: number[]; readonly separator: number } {
    const count = (text: string, subject: string): number => countWith(this.#options.countTokens, text, BUDGET_COUNTER, subject)
    const fresh = new Map<string, number>()
    const counts = parts.map((part) => {
      let tokens = this.#cache.get(part.text) ?? fresh.get(part.text)
      if (tokens === undefined) fresh.set(part.text, (tokens = count(part.text, `rendered part "${part.name}"`)))
      return tokens
    })
    return { counts, separator: this.#separator ?? count(PART_SEPARATOR, 'the part separator "\\n\\n"') }
  }
}
