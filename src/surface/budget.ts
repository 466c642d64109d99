/**
 * The cache-preserving token budget (SPEC §5), run on each step's unbudgeted prompt in two phases, so a
 * step that fails later leaves it untouched: `plan` decides and changes nothing; `commit` adopts the plan.
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { validateBudgetOptions, type BudgetOptions, type ValidBudgetOptions } from './budget-options.js'
import { keptPrompt, sameParts, sameVariables } from './kept-prompt.js'
import { promptTokenSum, TokenCounts, type MeasuredPrompt } from './token-counts.js'
import { checkParts, sameLayoutAs, sharedPrefixCount, withholdOrder } from './withhold-order.js'

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
 * One step's budget decision; nothing is adopted until `commit`. `rendered` is
 * the input itself when nothing is withheld; `withheld` is in prompt order;
 * `promptTokens` is by the count rule and `partTokens[i]` counts `rendered.parts[i]`.
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

/** Creates a token budget. Throws what `validateBudgetOptions` throws. */
export function createTokenBudget(options: BudgetOptions): TokenBudget {
  return new TokenBudget(validateBudgetOptions(options))
}

/** What a commit adopts besides the plan itself. */
interface Decision {
  /** The committed step's unbudgeted prompt; `undefined` before the first commit. */
  readonly input: RenderedPrompt | undefined
  readonly withheld: ReadonlySet<string>
  /** The withhold order of `input`: indices of its withholdable parts, first withheld first. */
  readonly order: readonly number[]
  /** How many leading parts of `input` the order treats as shared, and the scope that decided it. */
  readonly sharedCount: number
  readonly own: ScopeKey | undefined
}

interface PlanState {
  /** The commit count the plan was made against (a later commit makes it stale). */
  readonly base: number
  /** `undefined` when the plan repeats the committed one for the same input. */
  readonly measured: MeasuredPrompt | undefined
  readonly decision: Decision
}

const NO_DECISION: Decision = { input: undefined, withheld: new Set(), order: [], sharedCount: 0, own: undefined }

/** The stateful budget of one step surface. */
export class TokenBudget {
  readonly #options: ValidBudgetOptions
  readonly #counts: TokenCounts
  /** What each plan would commit; keyed by the plan so a forged or foreign plan is rejected. */
  readonly #plans = new WeakMap<BudgetPlan, PlanState>()
  #generation = 0
  #decision = NO_DECISION
  #last: BudgetPlan | undefined

  constructor(options: ValidBudgetOptions) {
    this.#options = options
    this.#counts = new TokenCounts(options.countTokens)
  }

  /** The withheld names after the last commit, in that prompt's order. */
  get withheld(): readonly string[] {
    return this.#last?.withheld ?? []
  }

  /** `cachedTexts`: distinct part texts whose token count is cached (those of the last committed prompt). */
  stats(): { readonly cachedTexts: number } {
    return { cachedTexts: this.#counts.size }
  }

  /**
   * Decides without changing any state. Throws a `TypeError` for duplicate part names or a non-finite priority,
   * and what `countWith` and `promptTokenSum` throw. `own`, the agent's scope, ends the shared prefix.
   */
  plan(rendered: RenderedPrompt, own?: ScopeKey): BudgetPlan {
    const last = this.#last
    const before = this.#decision
    const scope = this.#options.shared === 'prefer-unshared' ? own : undefined
    // The committed step's input again, or an equal one: the decision is a function
    // of (withheld set, prompt, scope), and committing it made the set a fixed point.
    if (
      last !== undefined &&
      scope === before.own &&
      (rendered === before.input || (sameParts(rendered.parts, before.input!.parts) && sameVariables(rendered.variables, before.input!.variables)))
    ) {
      const warnings = last.warnings.filter((warning) => warning.kind === 'over-budget')
      const output = last.withheld.length === 0 ? rendered : last.rendered
      const plan: BudgetPlan = Object.freeze({ ...last, rendered: output, warnings: Object.freeze(warnings) })
      return this.#register(plan, undefined, { ...before, input: rendered })
    }
    const parts = rendered.parts
    const sharedCount = scope === undefined ? parts.length : sharedPrefixCount(rendered, scope)
    const sameLayout = before.input !== undefined && sameLayoutAs(parts, before.input.parts)
    if (!sameLayout) checkParts(parts)
    const measured = this.#counts.measure(parts)
    const { counts, separator } = measured
    const { maxTokens, restoreTokens } = this.#options
    const order = sameLayout && sharedCount === before.sharedCount ? before.order : withholdOrder(parts, sharedCount)

    // Sticky: the withheld set is the order's prefix through the last name still withheld.
    let k = order.length
    while (k > 0 && !before.withheld.has(parts[order[k - 1]!]!.name)) k--
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

    const withheld = parts.filter((_, i) => out[i] === 1).map((part) => part.name)
    const keptParts = parts.filter((_, i) => out[i] === 0)
    const keptCounts = counts.filter((_, i) => out[i] === 0)
    const output = withheld.length === 0 ? rendered : keptPrompt(keptParts, rendered.variables, last?.rendered)
    const withheldSet = new Set(withheld)
    const restored = parts.filter((part) => before.withheld.has(part.name) && !withheldSet.has(part.name)).map((part) => part.name)
    const plan: BudgetPlan = Object.freeze({
      rendered: output,
      withheld: Object.freeze(withheld),
      overBudget,
      promptTokens,
      partTokens: Object.freeze(keptCounts),
      separatorTokens: separator,
      warnings: Object.freeze(budgetWarnings(this.#options, before.withheld, withheld, restored, overBudget, promptTokens)),
    })
    return this.#register(plan, measured, { input: rendered, withheld: withheldSet, order, sharedCount, own: scope })
  }

  /** Adopts `plan`. Throws a `TypeError` for a plan this budget did not make, an `Error` for a stale one. */
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
    this.#decision = state.decision
    this.#last = plan
    this.#generation++
  }

  #register(plan: BudgetPlan, measured: MeasuredPrompt | undefined, decision: Decision): BudgetPlan {
    this.#plans.set(plan, { base: this.#generation, measured, decision })
    return plan
  }
}

/** The step's findings against the withheld set `before` (the last committed one), in kind order. */
function budgetWarnings(
  options: ValidBudgetOptions,
  before: ReadonlySet<string>,
  withheld: readonly string[],
  restored: readonly string[],
  overBudget: boolean,
  tokens: number,
): BudgetWarning[] {
  const { maxTokens, restoreTokens, headroom } = options
  const warnings: BudgetWarning[] = []
  const added = withheld.filter((name) => !before.has(name))
  const add = (kind: BudgetWarning['kind'], sections: readonly string[], message: string): void => {
    warnings.push(Object.freeze({ kind, sections: Object.freeze([...sections]), message }))
  }
  if (added.length > 0) {
    const shared = options.shared === 'prefer-unshared' ? 'sections after the prefix shared with sibling agents first, then ' : ''
    const order = `${shared}lowest priority first, later first among equals`
    add(
      'withheld',
      added,
      `token budget withheld prompt ${sectionList(added)} (${order}) to fit maxTokens ${maxTokens}; ` +
        `the prompt is now ${tokens} tokens; raise a section's priority to keep it longer, or raise maxTokens`,
    )
  }
  if (restored.length > 0) {
    add(
      'restored',
      restored,
      `token budget restored prompt ${sectionList(restored)}: the prompt is now ${tokens} tokens, ` +
        `within ${restoreTokens} (maxTokens ${maxTokens} less ${headroom * 100}% headroom)`,
    )
  }
  if (overBudget) {
    const listed = withheld.length > 0 ? ` (${sectionList(withheld)})` : ''
    add(
      'over-budget',
      withheld,
      `the prompt is ${tokens} tokens, over maxTokens ${maxTokens} even with every withholdable section withheld${listed}; ` +
        'the rest is required or complete: shorten those sections or raise maxTokens',
    )
  }
  return warnings
}

function sectionList(names: readonly string[]): string {
  return `${names.length === 1 ? 'section' : 'sections'} ${names.map((name) => `"${name}"`).join(', ')}`
}
