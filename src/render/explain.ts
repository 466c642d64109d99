/** Which part produced a character, and how much of two prompts is identical: pure reads of `RenderedPrompt` data (SPEC §4.1). */

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
  /** UTF-16 code units (as the step surface's `stablePrefixLength`). */
  readonly length: number
  /** UTF-8 bytes, cut back to whole code points. */
  readonly bytes: number
  /** The parts holding the first difference; absent when one prompt is a prefix of the other or it falls on a separator. */
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
 * Which part (and, inside a substituted value, which variable) produced the
 * character at `offset` of `rendered.text`; `undefined` for a separator or an
 * offset outside the text (or not an integer).
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
 * The identical prefix of `a` and `b` (two agents, say) and the parts where
 * they first diverge. Leading identical parts are skipped whole, so a long
 * shared prefix compares cheaply.
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
  const inA = partIndexAt(a.parts, length)
  const inB = partIndexAt(b.parts, length)
  if (inA < 0 || inB < 0) return { length, bytes }
  return { length, bytes, firstDifferentPart: { a: a.parts[inA]!.name, b: b.parts[inB]!.name } }
}
