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

/** The part whose `[start, end)` holds `offset`; `undefined` for a separator or out of range. */
function partAt(parts: readonly RenderedPart[], offset: number): RenderedPart | undefined {
  let low = 0
  let high = parts.length - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const part = parts[mid]!
    if (offset < part.start) high = mid - 1
    else if (offset >= part.end) low = mid + 1
    else return part
  }
  return undefined
}

/**
 * Which part (and, inside a substituted value, which variable) produced the character at `offset` of `rendered.text`;
 * `undefined` for a separator or an offset outside the text (or not an integer).
 */
export function explain(rendered: RenderedPrompt, offset: number): PromptExplanation | undefined {
  const part = Number.isInteger(offset) ? partAt(rendered.parts, offset) : undefined
  if (part === undefined) return undefined
  const offsetInPart = offset - part.start
  for (const substitution of part.substitutions) {
    if (offsetInPart < substitution.start) break
    if (offsetInPart < substitution.end) return { part, offsetInPart, variable: substitution.variable }
  }
  return { part, offsetInPart }
}

/**
 * How far `a` and `b` agree: the count of equal leading parts (skipped whole, so a long shared prefix compares
 * cheaply), the identical prefix's UTF-16 `length`, and that length cut back to a whole code point of `a`.
 */
export function identicalPrefix(a: RenderedPrompt, b: RenderedPrompt): { parts: number; length: number; whole: number } {
  let parts = 0
  for (; parts < Math.min(a.parts.length, b.parts.length); parts++) {
    const partA = a.parts[parts]!
    if (partA.start !== b.parts[parts]!.start || partA.text !== b.parts[parts]!.text) break
  }
  const length = commonPrefixLength(a.text, b.text, parts === 0 ? 0 : a.parts[parts - 1]!.end)
  return { parts, length, whole: wholeCodePoints(a.text, b.text, length) }
}

/** The identical prefix of `a` and `b` (two agents, say) and the parts where they first diverge. */
export function comparePrompts(a: RenderedPrompt, b: RenderedPrompt): PromptComparison {
  const { length, whole } = identicalPrefix(a, b)
  const bytes = utf8Length(a.text, 0, whole)
  const inA = partAt(a.parts, length)
  const inB = partAt(b.parts, length)
  if (inA === undefined || inB === undefined) return { length, bytes }
  return { length, bytes, firstDifferentPart: { a: inA.name, b: inB.name } }
}
