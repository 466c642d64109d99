/**
 * The cache-preserving token budget (SPEC §5): a small, pure state machine
 * the step surface runs on each step's unbudgeted `RenderedPrompt`. Two
 * phases, so a step that fails later leaves the budget untouched:
 * `plan(rendered)` decides and changes nothing; `commit(plan)` adopts it.
 */

import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { validateBudgetOptions, type BudgetOptions, type ValidBudgetOptions } from './budget-options.js'
import { promptTokenSum } from './budget-sum.js'
import { keptPrompt, sameParts, sameVariables } from './kept-prompt.js'
import { TokenCounts, type MeasuredPrompt } from './token-counts.js'
import { budgetWarnings } from './budget-warnings.js'
import { checkParts, sameLayoutAs, sharedPrefixCount, withholdOrder } from './withhold-order.js'

/** A budget finding for the step result's warnings. */
export interface BudgetWarning {
  /**
   * `'withheld'`: sections newly withheld this step; `'restored'`: sections
   * sent again; `'over-budget'`: the prompt exceeds `maxTokens` even with
   * every withholdable section withheld (repeated every step it lasts).
   */
  readonly kind: 'withheld' | 'restored' | 'over-budget'
  /** The sections concerned, in prompt order (for `'over-budget'`: all withheld ones). */
  readonly sections: readonly string[]
  /** A human-readable explanation with the remedy. */
  readonly message: string
}

/** One step's budget decision, as `plan` returns it; nothing is adopted until `commit`. */
export interface BudgetPlan {
  /** The prompt to send: the input itself when nothing is withheld, else rebuilt from the kept parts. */
  readonly rendered: RenderedPrompt
  /** The withheld sections' names, in prompt order. */
  readonly withheld: readonly string[]
  /** The prompt exceeds `maxTokens` although every withholdable section is withheld. */
  readonly overBudget: boolean
  /** The tokens of `rendered` by the count rule (parts plus separators). */
  readonly promptTokens: number
  /** `partTokens[i]`: the token count of `rendered.parts[i].text` (from the cache; no new count). */
  readonly partTokens: readonly number[]
  /** The token count of the blank-line separator between two parts. */
  readonly separatorTokens: number
  /** Changes of the withheld set, and the over-budget finding. */
  readonly warnings: readonly BudgetWarning[]
}

/** Counts for tests and diagnostics. */
export interface BudgetStats {
  /** Distinct part texts whose token count is cached (those of the last committed prompt). */
  readonly cachedTexts: number
}

/** The stateful budget of one step surface. */
export interface TokenBudget {
  /**
   * Decides the budget for this step's unbudgeted prompt without changing
   * any state. Throws a `TypeError` for duplicate part names or a non-finite
   * priority, an error naming `countTokens` and the part when it throws or
   * returns a negative or non-finite count, and a `RangeError` naming
   * `countTokens` when the prompt's counts add up past
   * `Number.MAX_SAFE_INTEGER`. Counts are summed exactly (budget-sum.ts).
   * `own` is the agent's scope (the one `rendered` was assembled for): with
   * `shared: 'prefer-unshared'` it decides where the shared prefix ends.
   */
  plan(rendered: RenderedPrompt, own?: ScopeKey): BudgetPlan
  /**
   * Adopts `plan` (its withheld set and token counts). Throws a `TypeError`
   * for a plan this budget did not make, and an `Error` for a stale plan (one
   * made before the last commit, or committed already).
   */
  commit(plan: BudgetPlan): void
  /** The withheld names after the last commit, in that prompt's order. */
  readonly withheld: readonly string[]
  /** The current counts. */
  stats(): BudgetStats
}

/**
 * Creates a token budget. Throws a `TypeError` naming the option for a bad
 * budget (see `validateBudgetOptions`).
 */
export function createTokenBudget(options: BudgetOptions): TokenBudget {
  return new Budget(validateBudgetOptions(options))
}

interface PlanState {
  /** The commit count the plan was made against (a later commit makes it stale). */
  readonly base: number
  readonly input: RenderedPrompt
  /** `undefined` when the plan repeats the committed one for the same input. */
  readonly measured: MeasuredPrompt | undefined
  readonly withheld: ReadonlySet<string>
  /** The withhold order of `input`: indices of its withholdable parts, first withheld first. */
  readonly order: readonly number[]
  /** How many leading parts of `input` the order treats as shared, and the scope that decided it. */
  readonly sharedCount: number
  readonly own: ScopeKey | undefined
}

class Budget implements TokenBudget {
  readonly #options: ValidBudgetOptions
  readonly #counts: TokenCounts
  /** What each plan would commit; keyed by the plan so a forged or foreign plan is rejected. */
  readonly #plans = new WeakMap<BudgetPlan, PlanState>()
  #generation = 0
  #withheld: ReadonlySet<string> = new Set()
  #input: RenderedPrompt | undefined
  #order: readonly number[] = []
  #sharedCount = 0
  #own: ScopeKey | undefined
  #last: BudgetPlan | undefined

  constructor(options: ValidBudgetOptions) {
    this.#options = options
    this.#counts = new TokenCounts(options.countTokens)
  }

  get withheld(): readonly string[] {
    return this.#last?.withheld ?? []
  }

  stats(): BudgetStats {
    return { cachedTexts: this.#counts.size }
  }

  plan(rendered: RenderedPrompt, own?: ScopeKey): BudgetPlan {
    const last = this.#last
    const scope = this.#options.shared === 'prefer-unshared' ? own : undefined
    // The committed step's input again, or an equal one: the decision is a function
    // of (withheld set, prompt, scope), and committing it made the set a fixed point.
    if (
      last !== undefined &&
      scope === this.#own &&
      (rendered === this.#input || (sameParts(rendered.parts, this.#input!.parts) && sameVariables(rendered.variables, this.#input!.variables)))
    ) {
      const warnings = last.warnings.filter((warning) => warning.kind === 'over-budget')
      const output = last.withheld.length === 0 ? rendered : last.rendered
      const plan: BudgetPlan = Object.freeze({ ...last, rendered: output, warnings: Object.freeze(warnings) })
      return this.#register(plan, {
        base: this.#generation,
        input: rendered,
        measured: undefined,
        withheld: this.#withheld,
        order: this.#order,
        sharedCount: this.#sharedCount,
        own: scope,
      })
    }
    const parts = rendered.parts
    const sharedCount = scope === undefined ? parts.length : sharedPrefixCount(rendered, scope)
    const sameLayout = this.#input !== undefined && sameLayoutAs(parts, this.#input.parts)
    if (!sameLayout) checkParts(parts)
    const measured = this.#counts.measure(parts)
    const { counts, separator } = measured
    const { maxTokens, restoreTokens } = this.#options
    const order = sameLayout && sharedCount === this.#sharedCount ? this.#order : withholdOrder(parts, sharedCount)

    let k = 0
    if (this.#withheld.size > 0) {
      for (let rank = order.length - 1; rank >= 0; rank--) {
        if (this.#withheld.has(parts[order[rank]!]!.name)) {
          k = rank + 1
          break
        }
      }
    }
    // The tokens of the prompt sent, kept exact (integer counts as integers,
    // fractions without drift) while parts are withheld and restored.
    const tokens = promptTokenSum(counts, separator, 'budget countTokens')
    const out = new Uint8Array(parts.length)
    let kept = parts.length
    const withhold = (i: number): void => {
      out[i] = 1
      kept--
      tokens.subtract(counts[i]!)
      if (kept > 0) tokens.subtract(separator)
    }
    const restore = (i: number): void => {
      out[i] = 0
      if (kept > 0) tokens.add(separator)
      tokens.add(counts[i]!)
      kept++
    }
    for (let rank = 0; rank < k; rank++) withhold(order[rank]!)

    while (tokens.value > maxTokens && k < order.length) withhold(order[k++]!)
    const overBudget = tokens.value > maxTokens
    // Restoring never undoes this step's withholding: the part withheld last did
    // not fit maxTokens, so it cannot fit the lower restore threshold either.
    while (!overBudget && k > 0) {
      const i = order[k - 1]!
      restore(i)
      if (tokens.value > restoreTokens) {
        withhold(i)
        break
      }
      k--
    }
    const promptTokens = tokens.value

    const withheld: string[] = []
    const keptParts: RenderedPart[] = []
    const keptCounts: number[] = []
    for (let i = 0; i < parts.length; i++) {
      if (out[i] === 1) withheld.push(parts[i]!.name)
      else {
        keptParts.push(parts[i]!)
        keptCounts.push(counts[i]!)
      }
    }
    const output = withheld.length === 0 ? rendered : keptPrompt(keptParts, rendered.variables, last?.rendered)
    const withheldSet = new Set(withheld)
    const warnings = budgetWarnings(this.#options, this.#withheld, { parts, withheld, withheldSet, overBudget, tokens: promptTokens })
    const plan: BudgetPlan = Object.freeze({
      rendered: output,
      withheld: Object.freeze(withheld),
      overBudget,
      promptTokens,
      partTokens: Object.freeze(keptCounts),
      separatorTokens: separator,
      warnings: Object.freeze(warnings),
    })
    return this.#register(plan, { base: this.#generation, input: rendered, measured, withheld: withheldSet, order, sharedCount, own: scope })
  }

  commit(plan: BudgetPlan): void {
    const state = this.#plans.get(plan)
    if (state === undefined) {
      throw new TypeError('budget commit got a plan this budget did not make; commit the object that this budget\'s plan() returned')
    }
    if (state.base !== this.#generation) {
      throw new Error(
        'budget plan is stale: it was committed already or another plan was committed after it was made; plan the step again and commit that plan',
      )
    }
    if (state.measured !== undefined) this.#counts.adopt(state.measured)
    this.#withheld = state.withheld
    this.#input = state.input
    this.#order = state.order
    this.#sharedCount = state.sharedCount
    this.#own = state.own
    this.#last = plan
    this.#generation++
  }

  #register(plan: BudgetPlan, state: PlanState): BudgetPlan {
    this.#plans.set(plan, state)
    return plan
  }
}
