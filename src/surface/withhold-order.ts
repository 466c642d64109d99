/**
 * The token budget's withhold order (SPEC §5): the parts neither `required` nor `complete`, lowest `priority`
 * first, later first among equals so the prefix survives; with `shared: 'prefer-unshared'` every part after
 * the prefix shared with sibling agents first. The withheld set is always a prefix of that order:
 *
 *   order     c(p0) b(p0) a(p0) e(p2) d(p5)      a b c d e: prompt order
 *   withheld  ├───────────┘                    k = 3: over maxTokens → k grows; k shrinks
 *                                              while the prompt with order[k − 1] fits
 *                                              maxTokens × (1 − headroom)
 *
 * So a section is never sent while a more important one is withheld.
 */

import { describeValue } from '../assembly/errors.js'
import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import type { ScopeKey } from '../scope/scope-key.js'

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
  const order: number[] = []
  for (let i = 0; i < parts.length; i++) if (!parts[i]!.required && !parts[i]!.complete) order.push(i)
  return order.sort((a, b) => Number(a < sharedCount) - Number(b < sharedCount) || parts[a]!.priority - parts[b]!.priority || b - a)
}

/** How many leading parts come before the first that scope `own` supplies or fills a variable of (so renders per agent). */
export function sharedPrefixCount(rendered: RenderedPrompt, own: ScopeKey): number {
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
export function sameLayoutAs(parts: readonly RenderedPart[], previous: readonly RenderedPart[]): boolean {
  if (parts.length !== previous.length) return false
  for (let i = 0; i < parts.length; i++) {
    const a = parts[i]!
    const b = previous[i]!
    if (a.name !== b.name || a.priority !== b.priority || a.required !== b.required || a.complete !== b.complete) return false
  }
  return true
}
