/**
 * The cache-preserving token budget (SPEC §5): a small, pure state machine
 * the step surface runs on each step's unbudgeted `RenderedPrompt`. Two
 * phases, so a step that fails later leaves the budget untouched:
 * `plan(rendered)` decides and changes nothing; `commit(plan)` adopts it.
 *
 * The withhold order ranks the withholdable parts (neither `required` nor
 * `complete`): lowest `priority` first, and among equal priorities the one
 * later in the prompt first, so the prefix survives. The withheld set is
 * always a prefix of that order:
 *
 *   withhold order   c(p0) b(p0) a(p0) e(p2) d(p5)      a b c d e: prompt order
 *   withheld          ├───────────┘                    k = 3
 *                     over maxTokens → k grows; restoring → k shrinks from the
 *                     right while the prompt with order[k − 1] restored fits
 *                     maxTokens × (1 − headroom); the first that does not stops it
 *
 * With `shared: 'prefer-unshared'` the order first ranks every part after
 * the prefix this agent shares with its siblings (before any inside it), by
 * the same rule within each group:
 *
 *   parts    a  b  c  d  e        shared prefix: a b c (d is the agent's own)
 *   order    e(p0) d(p1) c(p0) b(p0) a(p1)
 *
 * So a section is never sent while a more important one is withheld: a new
 * section ranking below a withheld one is withheld at once, and a small
 * low-priority section waits behind a larger, more important one that cannot
 * be restored yet. Sticky: k is carried by the withheld names from step to
 * step (the prefix through the last of them that is still withholdable), so
 * an unchanged prompt gets the same decision, and the same output, every step.
 */

import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { describeValue } from '../assembly/errors.js'
import { validateBudgetOptions, type BudgetOptions, type ValidBudgetOptions } from './budget-options.js'
import { promptTokenSum } from './budget-sum.js'
import { keptPrompt, sameParts, sameVariables } from './kept-prompt.js'
import { TokenCounts, type MeasuredPrompt } from './token-counts.js'

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
    const warnings = this.#warningsFor(parts, withheld, withheldSet, overBudget, promptTokens)
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

  #warningsFor(
    parts: readonly RenderedPart[],
    withheld: readonly string[],
    withheldSet: ReadonlySet<string>,
    overBudget: boolean,
    tokens: number,
  ): BudgetWarning[] {
    const { maxTokens, restoreTokens, headroom } = this.#options
    const before = this.#withheld
    const warnings: BudgetWarning[] = []
    const added = withheld.filter((name) => !before.has(name))
    if (added.length > 0) {
      warnings.push(
        finding(
          'withheld',
          added,
          `token budget withheld prompt ${sectionList(added)} (${this.#options.shared === 'prefer-unshared' ? 'sections after the prefix shared with sibling agents first, then ' : ''}lowest priority first, later first among equals) to fit maxTokens ${maxTokens}; ` +
            `the prompt is now ${tokens} tokens; raise a section's priority to keep it longer, or raise maxTokens`,
        ),
      )
    }
    const restored: string[] = []
    for (const part of parts) if (before.has(part.name) && !withheldSet.has(part.name)) restored.push(part.name)
    if (restored.length > 0) {
      warnings.push(
        finding(
          'restored',
          restored,
          `token budget restored prompt ${sectionList(restored)}: the prompt is now ${tokens} tokens, ` +
            `within ${restoreTokens} (maxTokens ${maxTokens} less ${headroom * 100}% headroom)`,
        ),
      )
    }
    if (overBudget) {
      warnings.push(
        finding(
          'over-budget',
          withheld,
          `the prompt is ${tokens} tokens, over maxTokens ${maxTokens} even with every withholdable section withheld` +
            `${withheld.length > 0 ? ` (${sectionList(withheld)})` : ''}; the rest is required or complete: shorten those sections or raise maxTokens`,
        ),
      )
    }
    return warnings
  }
}

function finding(kind: BudgetWarning['kind'], sections: readonly string[], message: string): BudgetWarning {
  return Object.freeze({ kind, sections: Object.freeze([...sections]), message })
}

function sectionList(names: readonly string[]): string {
  return `${names.length === 1 ? 'section' : 'sections'} ${names.map((name) => `"${name}"`).join(', ')}`
}

/** Names key the withheld set, so they must be unique; priorities order it, so they must be finite. */
function checkParts(parts: readonly RenderedPart[]): void {
  const names = new Set<string>()
  for (const part of parts) {
    if (names.has(part.name)) {
      throw new TypeError(
        `rendered prompt has two parts named "${part.name}"; the token budget withholds sections by name, so names must be unique (a "system-prompt/assemble" listener may have added a copy)`,
      )
    }
    names.add(part.name)
    if (typeof part.priority !== 'number' || !Number.isFinite(part.priority)) {
      throw new TypeError(`rendered part "${part.name}" priority must be a finite number (got ${describeValue(part.priority)})`)
    }
  }
}

/**
 * Parts at or after `sharedCount` first; then lowest priority first; among
 * equal priorities the later part first (the prefix survives).
 */
function withholdOrder(parts: readonly RenderedPart[], sharedCount: number): number[] {
  const order: number[] = []
  for (let i = 0; i < parts.length; i++) if (!parts[i]!.required && !parts[i]!.complete) order.push(i)
  return order.sort((a, b) => Number(a < sharedCount) - Number(b < sharedCount) || parts[a]!.priority - parts[b]!.priority || b - a)
}

/**
 * How many leading parts the agent of scope `own` shares with its siblings:
 * those before the first part that its own layer supplies or that fills in a
 * variable its own layer supplies (such a part renders differently per agent).
 */
function sharedPrefixCount(rendered: RenderedPrompt, own: ScopeKey): number {
  const ownVariables = new Set<string>()
  for (const variable of rendered.variables) if (variable.layer === own) ownVariables.add(variable.name)
  const { parts } = rendered
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.layer === own || part.variables.some((name) => ownVariables.has(name))) return i
  }
  return parts.length
}

/** Same names, priorities and flags at every position: the checks and the withhold order carry over. */
function sameLayoutAs(parts: readonly RenderedPart[], previous: readonly RenderedPart[]): boolean {
  if (parts.length !== previous.length) return false
  for (let i = 0; i < parts.length; i++) {
    const a = parts[i]!
    const b = previous[i]!
    if (a.name !== b.name || a.priority !== b.priority || a.required !== b.required || a.complete !== b.complete) return false
  }
  return true
}
