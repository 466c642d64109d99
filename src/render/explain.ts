/**
 * Questions about a rendered prompt, answered from its data alone (SPEC
 * §4.1): which part (and variable) produced a character, and how much of two
 * prompts is identical. Pure; a structural copy of a `RenderedPrompt` is
 * answered exactly like the original.
 */

import type { RenderedPart, RenderedPrompt } from './rendered-prompt.js'
import { commonPrefixLength, utf8Length, wholeCodePoints } from './utf8.js'

/** What produced one character of a rendered prompt. */
export interface PromptExplanation {
  readonly part: RenderedPart
  /** The character's offset inside `part.text`. */
  readonly offsetInPart: number
  /** The variable whose substituted value contains the character, when it lies inside one. */
  readonly variable?: string
}

/** The identical prefix of two rendered prompts. */
export interface PromptComparison {
  /** UTF-16 code units of the common prefix (as the step surface's `stablePrefixLength`). */
  readonly length: number
  /** UTF-8 bytes of the common prefix, cut back to whole code points. */
  readonly bytes: number
  /**
   * The names of the parts containing the first differing position in each
   * prompt; absent when one prompt is a prefix of the other or the
   * divergence falls on a separator.
   */
  readonly firstDifferentPart?: { readonly a: string; readonly b: string }
}

/** The index of the part whose `[start, end)` holds `offset`, or -1 (a separator, or out of range). */
function partIndexAt(parts: readonly RenderedPart[], offset: number): number {
  let low = 0
  let high = parts.length - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const part = parts[mid]!
    if (offset < part.start) high = mid - 1
    else if (offset >= part.end) low = mid + 1
    else return mid
  }
  return -1
}

/**
 * Which part produced the character at `offset` of `rendered.text` and, when
 * it lies inside a substituted value, which variable. `undefined` for a
 * blank-line separator and for an offset outside the text (or not an integer).
 */
export function explain(rendered: RenderedPrompt, offset: number): PromptExplanation | undefined {
  if (!Number.isInteger(offset)) return undefined
  const index = partIndexAt(rendered.parts, offset)
  if (index < 0) return undefined
  const part = rendered.parts[index]!
  const offsetInPart = offset - part.start
  for (const substitution of part.substitutions) {
    if (offsetInPart < substitution.start) break
    if (offsetInPart < substitution.end) return { part, offsetInPart, variable: substitution.variable }
  }
  return { part, offsetInPart }
}

/**
 * The identical prefix of `a` and `b` (two agents, say, or an agent and its
 * preset): its length in UTF-16 code units and UTF-8 bytes, and the parts
 * where the prompts first diverge. Leading parts that are the same string
 * are skipped whole, so prompts sharing a long prefix compare cheaply.
 */
export function comparePrompts(a: RenderedPrompt, b: RenderedPrompt): PromptComparison {
  const textA = a.text
  const textB = b.text
  let from = 0
  const shared = Math.min(a.parts.length, b.parts.length)
  for (let i = 0; i < shared; i++) {
    const partA = a.parts[i]!
    const partB = b.parts[i]!
    if (partA.start !== partB.start || partA.text !== partB.text) break
    from = partA.end
  }
  const length = commonPrefixLength(textA, textB, from)
  const bytes = utf8Length(textA, 0, wholeCodePoints(textA, textB, length))
  if (length >= textA.length || length >= textB.length) return { length, bytes }
  const inA = partIndexAt(a.parts, length)
  const inB = partIndexAt(b.parts, length)
  if (inA < 0 || inB < 0) return { length, bytes }
  return { length, bytes, firstDifferentPart: { a: a.parts[inA]!.name, b: b.parts[inB]!.name } }
}
