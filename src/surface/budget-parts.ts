/**
 * What the token budget reads off the parts (SPEC §5). The withhold order: the parts neither `required` nor
 * `complete`, lowest `priority` first, later first among equals so the prefix survives; with
 * `shared: 'prefer-unshared'` every part after the prefix shared with sibling agents first. The withheld set
 * is always a prefix of that order:
 *
 *   order     c(p0) b(p0) a(p0) e(p2) d(p5)      a b c d e: prompt order
 *   withheld  ├───────────┘                    k = 3: over maxTokens → k grows; k shrinks
 *                                              while the prompt with order[k − 1] fits
 *                                              maxTokens × (1 − headroom)
 *
 * So a section is never sent while a more important one is withheld.
 */

import { describeValue } from '../assembly/errors.js'
import { buildRenderedPrompt, type PartInput, type RenderedPart, type RenderedPrompt, type RenderedVariable } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'
import type { BudgetWarning, ValidBudgetOptions } from './budget.js'

/** Names key the withheld set, so they must be unique; priorities order it, so they must be finite. */
export function checkParts(parts: readonly RenderedPart[]): void {
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

/** The indices of the withholdable parts, first withheld first. */
export function withholdOrder(parts: readonly RenderedPart[], sharedCount: number): number[] {
  const order = [...parts.keys()].filter((i) => !parts[i]!.required && !parts[i]!.complete)
  return order.sort((a, b) => Number(a < sharedCount) - Number(b < sharedCount) || parts[a]!.priority - parts[b]!.priority || b - a)
}

/** How many leading parts come before the first that scope `own` supplies or fills a variable of (so renders per agent). */
export function sharedPrefixCount(rendered: RenderedPrompt, own: ScopeKey): number {
  const ownVariables = new Set(rendered.variables.filter((variable) => variable.layer === own).map((variable) => variable.name))
  const index = rendered.parts.findIndex((part) => part.layer === own || part.variables.some((name) => ownVariables.has(name)))
  return index === -1 ? rendered.parts.length : index
}

/** The fields whose equality at every position lets the checks and the withhold order carry over. */
export const LAYOUT_FIELDS = Object.freeze(['name', 'priority', 'required', 'complete'] as const)

/** Every `PartInput` field equal parts share (offsets follow from the texts); a test checks no new field is left out. */
export const COMPARED_PART_FIELDS = Object.freeze([
  'name', 'text', 'layer', 'origin', 'stability', 'variables',
  'cacheBreakpoint', 'required', 'restored', 'complete', 'priority', 'substitutions',
] as const satisfies readonly (keyof PartInput)[])

const VARIABLE_FIELDS = ['name', 'layer', 'stability'] as const

/** The prompt of `kept` (the parts sent) and the `variables` they reference: `previous` when equal, else one built anew. */
export function keptPrompt(kept: readonly RenderedPart[], variables: readonly RenderedVariable[], previous: RenderedPrompt | undefined): RenderedPrompt {
  const referenced = new Set(kept.flatMap((part) => part.variables))
  const sent = { parts: kept, variables: variables.filter(({ name }) => referenced.has(name)) }
  return previous !== undefined && samePrompt(sent, previous) ? previous : buildRenderedPrompt(kept, sent.variables, previous)
}

/** Whether `a` and `b` hold equal parts (every compared field) and the same variables by name, layer and stability, in order. */
export function samePrompt(a: Pick<RenderedPrompt, 'parts' | 'variables'>, b: RenderedPrompt): boolean {
  return sameFields(a.parts, b.parts, COMPARED_PART_FIELDS) && sameFields(a.variables, b.variables, VARIABLE_FIELDS)
}

/** Whether `a` and `b` agree on `fields` at every position by `sameValue`. */
export function sameFields<T>(a: readonly T[], b: readonly T[], fields: readonly (keyof T)[]): boolean {
  return a === b || (a.length === b.length && a.every((x, i) => x === b[i] || fields.every((key) => sameValue(x[key], b[i]![key]))))
}

/** Strict equality (a part's `layer` is equal only to itself), except arrays, by element, and their records by field. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  return a.every((item, i) => item === b[i] || sameRecord(item, b[i]))
}

function sameRecord(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => (a as Record<string, unknown>)[key] === (b as Record<string, unknown>)[key])
}

/** The step's findings against the withheld set `before` (the last committed one), in kind order. */
export function budgetWarnings(
  options: ValidBudgetOptions,
  before: ReadonlySet<string>,
  withheld: readonly string[],
  restored: readonly string[],
  overBudget: boolean,
  tokens: number,
): BudgetWarning[] {
  const { maxTokens, restoreTokens, headroom } = options
  const warnings: BudgetWarning[] = []
  const add = (kind: BudgetWarning['kind'], sections: readonly string[], message: string): void => {
    warnings.push(Object.freeze({ kind, sections: Object.freeze([...sections]), message }))
  }
  const added = withheld.filter((name) => !before.has(name))
  if (added.length > 0) {
    const shared = options.shared === 'prefer-unshared' ? 'sections after the prefix shared with sibling agents first, then ' : ''
    const order = `${shared}lowest priority first, later first among equals`
    const fit = `to fit maxTokens ${maxTokens}; the prompt is now ${tokens} tokens`
    const remedy = "raise a section's priority to keep it longer, or raise maxTokens"
    add('withheld', added, `token budget withheld prompt ${sectionList(added)} (${order}) ${fit}; ${remedy}`)
  }
  if (restored.length > 0) {
    const now = `the prompt is now ${tokens} tokens, within ${restoreTokens}`
    const limit = `(maxTokens ${maxTokens} less ${Number((headroom * 100).toPrecision(15))}% headroom)`
    add('restored', restored, `token budget restored prompt ${sectionList(restored)}: ${now} ${limit}`)
  }
  if (overBudget) {
    const listed = withheld.length > 0 ? ` (${sectionList(withheld)})` : ''
    const over = `the prompt is ${tokens} tokens, over maxTokens ${maxTokens} even with every withholdable section withheld`
    add('over-budget', withheld, `${over}${listed}; the rest is required or complete: shorten those sections or raise maxTokens`)
  }
  return warnings
}

function sectionList(names: readonly string[]): string {
  return `${names.length === 1 ? 'section' : 'sections'} ${names.map((name) => `"${name}"`).join(', ')}`
}
