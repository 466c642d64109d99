/**
 * The KV-cache prefix report of the step surface: how much of this step's
 * rendered system prompt is identical to the previous step's, and which
 * sections changed. Pure; it reads `RenderedPrompt` parts only.
 */

import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import { utf8Length, wholeCodePoints } from '../render/utf8.js'

const SEPARATOR_LENGTH = 2 // '\n\n'

/** The previous step's rendered prompt, kept to compare against. */
export interface PromptState {
  readonly rendered: RenderedPrompt | undefined
  readonly outputs: ReadonlyMap<string, string>
  /** UTF-8 bytes of the whole prompt. */
  readonly bytes: number
  /** The sections that changed in that step; `undefined` on the first step (nothing to compare). */
  readonly changed: ReadonlySet<string> | undefined
}

/** The state before the first step: no prompt. */
export const NO_PROMPT: PromptState = { rendered: undefined, outputs: new Map(), bytes: 0, changed: undefined }

/** One step's prefix report, and the state the next step compares with. */
export interface PrefixReport {
  readonly length: number
  readonly bytes: number
  readonly changedSet: ReadonlySet<string>
  readonly changedSections: string[]
  readonly next: PromptState
}

const NO_PARTS: readonly RenderedPart[] = []

/**
 * Compares this step's render with the previous one. The leading parts whose
 * texts are equal are skipped whole; only from the first differing part on
 * are characters compared, up to the first difference.
 */
export function prefixReportOf(prev: PromptState, rendered: RenderedPrompt, hasPrevious: boolean): PrefixReport {
  const { text, parts } = rendered
  if (rendered === prev.rendered && hasPrevious) {
    const next = { ...prev, changed: new Set<string>() }
    return { length: text.length, bytes: prev.bytes, changedSet: next.changed, changedSections: [], next }
  }
  const before = prev.rendered?.parts ?? NO_PARTS
  let i = 0
  let offset = 0
  while (i < before.length && i < parts.length && before[i]!.text === parts[i]!.text) {
    offset += (i > 0 ? SEPARATOR_LENGTH : 0) + parts[i]!.text.length
    i++
  }
  // text and the previous text agree on [0, offset); compare characters from there.
  const previous = prev.rendered?.text ?? ''
  let end = offset
  const limit = Math.min(previous.length, text.length)
  while (end < limit && previous.charCodeAt(end) === text.charCodeAt(end)) end++
  const whole = wholeCodePoints(text, previous, end)
  const bytes = utf8Length(text, 0, whole)

  const outputs = outputsOf(parts)
  const changed = new Set<string>()
  for (const [name, output] of outputs) if ((prev.outputs.get(name) ?? '') !== output) changed.add(name)
  for (const name of prev.outputs.keys()) if (!outputs.has(name)) changed.add(name)
  // A section that only moved to where the prompt diverges changed the prompt too.
  if (i < before.length && i < parts.length) {
    const moved = parts[i]!.name
    if (before[i]!.name !== moved && !changed.has(moved) && !changed.has(before[i]!.name)) changed.add(moved)
  }
  return {
    length: end,
    bytes,
    changedSet: changed,
    changedSections: inPromptOrder(changed, before, parts),
    next: { rendered, outputs, bytes: bytes + utf8Length(text, whole), changed: hasPrevious ? changed : undefined },
  }
}

/** Name → output, first occurrence winning (names are unique in a registry-made assembly). */
function outputsOf(parts: readonly RenderedPart[]): Map<string, string> {
  const outputs = new Map<string, string>()
  for (const { name, text } of parts) if (!outputs.has(name)) outputs.set(name, text)
  return outputs
}

/**
 * `changed` in prompt order: current sections in their order, and each
 * removed section right after the nearest earlier previous section that is
 * still present (so a removal sorts where it made the prompt diverge).
 */
function inPromptOrder(
  changed: ReadonlySet<string>,
  before: readonly RenderedPart[],
  sections: readonly RenderedPart[],
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

