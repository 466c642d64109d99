/**
 * The KV-cache prefix report of the step surface: how much of this step's
 * rendered system prompt is identical to the previous step's, and which
 * sections changed. Pure; the render memo's knowledge does the heavy lifting.
 */

import type { RenderedPromptSection } from './render.js'
import { utf8ByteLength } from './utf8-bytes.js'

const SEPARATOR_LENGTH = 2 // '\n\n', ASCII: as many bytes as code units

/** The previous step's rendered prompt, kept to compare against. */
export interface PromptState {
  readonly text: string
  readonly sections: readonly RenderedPromptSection[]
  readonly outputs: ReadonlyMap<string, string>
  /** UTF-8 bytes of each section's output, by position; filled lazily and carried over for unchanged outputs. */
  readonly sectionBytes: (number | undefined)[]
  /** The sections that changed in that step; `undefined` on the first step (nothing to compare). */
  readonly changed: ReadonlySet<string> | undefined
}

/** The state before the first step: an empty prompt with no sections. */
export const NO_PROMPT: PromptState = { text: '', sections: [], outputs: new Map(), sectionBytes: [], changed: undefined }

/** One step's prefix report, and the state the next step compares with. */
export interface PrefixReport {
  readonly length: number
  readonly bytes: number
  readonly changedSet: ReadonlySet<string>
  readonly changedSections: string[]
  readonly next: PromptState
}

function bytesAt(state: PromptState, index: number): number {
  return (state.sectionBytes[index] ??= utf8ByteLength(state.sections[index]!.output))
}

/** UTF-8 bytes of the whole rendered prompt of `state`. */
function totalBytes(state: PromptState): number {
  let bytes = 0
  let count = 0
  for (let i = 0; i < state.sections.length; i++) {
    if (state.sections[i]!.output === '') continue
    if (count++ > 0) bytes += SEPARATOR_LENGTH
    bytes += bytesAt(state, i)
  }
  return bytes
}

/**
 * Compares this step's render with the previous one. The leading sections
 * whose outputs are `===` (the memo hands back the same string objects for
 * unchanged sections, so most of these checks are pointer compares) are
 * skipped whole; only from the first differing section on are characters
 * compared, up to the first difference. Empty outputs are not in the prompt
 * and add no separator, so they are skipped on both sides.
 */
export function comparePrompts(
  prev: PromptState,
  text: string,
  sections: readonly RenderedPromptSection[],
  hasPrevious: boolean,
): PrefixReport {
  if (sections === prev.sections && hasPrevious) {
    const next = { ...prev, changed: new Set<string>() }
    return { length: text.length, bytes: totalBytes(prev), changedSet: next.changed, changedSections: [], next }
  }
  const before = prev.sections
  const sectionBytes: (number | undefined)[] = []
  let i = 0
  let j = 0
  let matched = 0
  let offset = 0
  let bytes = 0
  for (;;) {
    while (i < before.length && before[i]!.output === '') i++
    while (j < sections.length && sections[j]!.output === '') j++
    if (i >= before.length || j >= sections.length || before[i]!.output !== sections[j]!.output) break
    if (matched++ > 0) {
      offset += SEPARATOR_LENGTH
      bytes += SEPARATOR_LENGTH
    }
    offset += sections[j]!.output.length
    // The same output as before: its byte length is known already.
    bytes += sectionBytes[j] = bytesAt(prev, i)
    i++
    j++
  }
  // text and prev.text agree on [0, offset); compare characters from there.
  const previous = prev.text
  let end = offset
  const limit = Math.min(previous.length, text.length)
  while (end < limit && previous.charCodeAt(end) === text.charCodeAt(end)) end++
  // A prefix that ends between the halves of a surrogate pair shares no whole code point there.
  let whole = end
  if (whole > offset && isHighSurrogate(text.charCodeAt(whole - 1))) {
    if (isLowSurrogate(text.charCodeAt(whole)) || isLowSurrogate(previous.charCodeAt(whole))) whole--
  }
  bytes += whole > offset ? utf8ByteLength(text, offset, whole) : 0

  const outputs = outputsOf(sections)
  const changed = new Set<string>()
  for (const [name, output] of outputs) if ((prev.outputs.get(name) ?? '') !== output) changed.add(name)
  for (const [name, output] of prev.outputs) if (output !== '' && !outputs.has(name)) changed.add(name)
  // A section that only moved to where the prompt diverges changed the prompt too.
  if (i < before.length && j < sections.length) {
    const moved = sections[j]!.name
    if (before[i]!.name !== moved && !changed.has(moved) && !changed.has(before[i]!.name)) changed.add(moved)
  }
  return {
    length: end,
    bytes,
    changedSet: changed,
    changedSections: inPromptOrder(changed, before, sections),
    next: { text, sections, outputs, sectionBytes, changed: hasPrevious ? changed : undefined },
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

/** Name → output, first occurrence winning (names are unique in a registry-made assembly). */
function outputsOf(sections: readonly RenderedPromptSection[]): Map<string, string> {
  const outputs = new Map<string, string>()
  for (const { name, output } of sections) if (!outputs.has(name)) outputs.set(name, output)
  return outputs
}

/**
 * `changed` in prompt order: current sections in their order, and each
 * removed section right after the nearest earlier previous section that is
 * still present (so a removal sorts where it made the prompt diverge).
 */
function inPromptOrder(
  changed: ReadonlySet<string>,
  before: readonly RenderedPromptSection[],
  sections: readonly RenderedPromptSection[],
): string[] {
  if (changed.size === 0) return []
  const present = new Set(sections.map((section) => section.name))
  const removedAfter = new Map<string | undefined, string[]>()
  let anchor: string | undefined
  for (const { name } of before) {
    if (present.has(name)) anchor = name
    else if (changed.has(name)) {
      const list = removedAfter.get(anchor)
      if (list === undefined) removedAfter.set(anchor, [name])
      else list.push(name)
    }
  }
  const out: string[] = []
  const seen = new Set<string>()
  const emit = (name: string): void => {
    if (!seen.has(name)) {
      seen.add(name)
      out.push(name)
    }
  }
  for (const name of removedAfter.get(undefined) ?? []) emit(name)
  for (const { name } of sections) {
    if (changed.has(name)) emit(name)
    const removed = removedAfter.get(name)
    if (removed !== undefined) for (const gone of removed) emit(gone)
  }
  return out
}

