/**
 * Why a step lost reuse (SPEC §3 "Why the cache broke"), computed from the
 * two prompts the surface compared and the request header. Pure: plain
 * values in, a frozen `CacheBreak` (or `undefined`) out.
 *
 *   tools → config → system prompt          (the order providers cache in)
 *                      │
 *   the part at the first differing ─┬─ same section in both:  section (+ variable when only a value changed)
 *   position, in each prompt         ├─ left the prompt:       withheld (budget) / removed
 *                                    └─ entered it:            restored (budget) / added
 */

import type { LayerRef } from '../assembly/entries.js'
import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'

/** What broke the reusable prefix first, in prefix order (tools → config → system prompt). */
export type CacheBreakCause = 'tools' | 'config' | 'withheld' | 'restored' | 'section' | 'removed' | 'added'

/**
 * Why a step lost reuse (SPEC §3 "Why the cache broke"): the first cause in
 * prefix order. `section`/`layer` name the part at the first difference (for
 * `'withheld'`/`'restored'`, the section the budget moved); `variable` is set
 * when that part's template is unchanged and a referenced variable's value
 * changed; `tools` lists the tool names when the tools changed.
 */
export interface CacheBreak {
  /** The first thing that broke the reusable prefix, in prefix order. */
  readonly cause: CacheBreakCause
  /** The section at the first difference, or the one the budget withheld or restored. */
  readonly section?: string
  /** The layer that supplied `section`: `'global'` or its scope key. */
  readonly layer?: LayerRef
  /** Set when `section`'s template is unchanged and this referenced variable's value changed. */
  readonly variable?: string
  /** With `cause: 'tools'`: the tool names by what changed (all three empty when the tools were only reordered). */
  readonly tools?: {
    /** Tools declared now and not on the previous step. */
    readonly added: readonly string[]
    /** Tools declared on the previous step and not now. */
    readonly removed: readonly string[]
    /** Tools declared on both steps whose declarations serialize differently. */
    readonly changed: readonly string[]
  }
}

/** What one step knows when it asks why reuse was lost (never asked on a surface's first step). */
export interface CacheBreakInput {
  /** The prompt sent on the previous step. */
  readonly previous: RenderedPrompt
  /** The prompt sent on this step. */
  readonly current: RenderedPrompt
  /** UTF-16 code units of `current.text` identical to `previous.text`. */
  readonly stableLength: number
  /** The tool names that changed, when the tool declarations serialize differently. */
  readonly tools: CacheBreak['tools'] | undefined
  /** The config serializes differently. */
  readonly configChanged: boolean
  /** The sections the budget withheld on the previous step and on this one (`[]` without a budget). */
  readonly withheldBefore: readonly string[]
  readonly withheldNow: readonly string[]
}

/**
 * The first cause of lost reuse, or `undefined` when nothing was lost. A
 * change of tools or config always loses the cached request prefix (it comes
 * first); otherwise reuse is lost when the identical prefix is shorter than
 * the previous prompt, and the cause is read where the prompts first differ:
 * in each prompt, the part holding that position (or ending right at it, or
 * followed by the separator it falls on).
 */
export function cacheBreakOf(input: CacheBreakInput): CacheBreak | undefined {
  if (input.tools !== undefined) return Object.freeze({ cause: 'tools', tools: input.tools })
  if (input.configChanged) return Object.freeze({ cause: 'config' })
  const { previous, current, stableLength } = input
  if (stableLength >= previous.text.length) return undefined
  const before = previous.parts
  const after = current.parts
  const i = partAt(before, stableLength)
  const gone = before[i]!
  const came = after[partAt(after, stableLength)]
  if (came !== undefined && came.name === gone.name) {
    if (came.text !== gone.text) {
      const variable = changedVariable(gone, came)
      return variable === undefined ? located('section', came) : Object.freeze({ ...located('section', came), variable })
    }
    // The same text ends here in both, and only the previous prompt goes on: what followed it left.
    const next = before[i + 1]
    if (next === undefined) return located('section', gone)
    return departed(next, input) ?? located('section', next)
  }
  const left = departed(gone, input)
  if (left !== undefined) return left
  if (came !== undefined && input.withheldBefore.includes(came.name) && !input.withheldNow.includes(came.name)) return located('restored', came)
  if (came !== undefined && !before.some((part) => part.name === came.name)) return located('added', came)
  // Both sections are in both prompts: the one sent here moved to where the prompts diverge.
  return located('section', came ?? gone)
}

/** `'withheld'` or `'removed'` when the previous prompt's `part` is not sent any more; `undefined` when it still is. */
function departed(part: RenderedPart, input: CacheBreakInput): CacheBreak | undefined {
  if (input.withheldNow.includes(part.name) && !input.withheldBefore.includes(part.name)) return located('withheld', part)
  if (!input.current.parts.some((sent) => sent.name === part.name)) return located('removed', part)
  return undefined
}

/** The index of the last part starting at or before `offset` (-1 for no parts): it holds the offset, ends at it, or precedes the separator holding it. */
function partAt(parts: readonly RenderedPart[], offset: number): number {
  let low = 0
  let high = parts.length - 1
  let found = -1
  while (low <= high) {
    const mid = (low + high) >>> 1
    if (parts[mid]!.start <= offset) {
      found = mid
      low = mid + 1
    } else high = mid - 1
  }
  return found
}

function located(cause: CacheBreakCause, part: RenderedPart): CacheBreak {
  return Object.freeze(part.layer === undefined ? { cause, section: part.name } : { cause, section: part.name, layer: part.layer })
}

/**
 * The variable whose value changed the part, when its template did not: the
 * literal text between substitutions and the substituted names are the same
 * in both renders, so only values differ; the first substitution whose value
 * differs names it (the first changed variable in first-use order, since a
 * variable has one value per render). `undefined` when the template changed.
 */
export function changedVariable(before: RenderedPart, after: RenderedPart): string | undefined {
  const a = before.substitutions
  const b = after.substitutions
  if (a.length !== b.length || a.length === 0) return undefined
  let changed: string | undefined
  let endA = 0
  let endB = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (x.variable !== y.variable) return undefined
    if (before.text.slice(endA, x.start) !== after.text.slice(endB, y.start)) return undefined
    if (changed === undefined && before.text.slice(x.start, x.end) !== after.text.slice(y.start, y.end)) changed = x.variable
    endA = x.end
    endB = y.end
  }
  if (before.text.slice(endA) !== after.text.slice(endB)) return undefined
  return changed
}
