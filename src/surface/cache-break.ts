/**
 * Why a step lost reuse (SPEC §3 "Why the cache broke"), from the two prompts
 * the surface compared and the request header:
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

/** Why a step lost reuse (SPEC §3 "Why the cache broke"): the first cause in prefix order. */
export interface CacheBreak {
  readonly cause: CacheBreakCause
  /** The section at the first difference, or the one the budget withheld or restored. */
  readonly section?: string
  /** The layer that supplied `section`: `'global'` or its scope key. */
  readonly layer?: LayerRef
  /** Set when `section`'s template is unchanged and this referenced variable's value changed. */
  readonly variable?: string
  /**
   * With `cause: 'tools'`: the tools declared now and not before, before and
   * not now, and in both but serialized differently (all empty when only reordered).
   */
  readonly tools?: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] }
}

/** What a step after the first knows: the prompts sent, the tool names when the tools changed, the budget's withheld sections. */
export interface CacheBreakInput {
  readonly previous: RenderedPrompt
  readonly current: RenderedPrompt
  /** UTF-16 code units of `current.text` identical to `previous.text`. */
  readonly stableLength: number
  readonly tools: CacheBreak['tools'] | undefined
  readonly configChanged: boolean
  readonly withheldBefore: readonly string[]
  readonly withheldNow: readonly string[]
}

/**
 * The first cause of lost reuse as a frozen `CacheBreak`, or `undefined` when
 * nothing was lost. Tools or config come first; otherwise the cause is read in
 * each prompt at the part holding the first differing position.
 */
export function cacheBreakOf(input: CacheBreakInput): CacheBreak | undefined {
  if (input.tools !== undefined) return Object.freeze({ cause: 'tools', tools: input.tools })
  if (input.configChanged) return Object.freeze({ cause: 'config' })
  const { previous, current, stableLength } = input
  if (stableLength >= previous.text.length) return undefined
  const before = previous.parts
  const after = current.parts
  // In each prompt, the last part starting at or before the first difference.
  const i = before.findLastIndex((part) => part.start <= stableLength)
  const gone = before[i]!
  const came = after.findLast((part) => part.start <= stableLength)
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

function located(cause: CacheBreakCause, part: RenderedPart): CacheBreak {
  return Object.freeze(part.layer === undefined ? { cause, section: part.name } : { cause, section: part.name, layer: part.layer })
}

/**
 * The first variable (in first-use order) whose value changed the part, when
 * the literal text between substitutions and the substituted names are the
 * same in both renders; `undefined` when the template changed.
 */
function changedVariable(before: RenderedPart, after: RenderedPart): string | undefined {
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
