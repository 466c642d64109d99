/** The step surface's KV-cache prefix report: how much of the prompt is identical to the previous step's, and which sections changed. */

import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import { utf8Length, wholeCodePoints } from '../render/utf8.js'

const SEPARATOR_LENGTH = 2 // '\n\n'

/** The previous step's prompt, its UTF-8 bytes, and the sections that changed in it (`undefined` on the first step). */
export interface PromptState {
  readonly rendered: RenderedPrompt | undefined
  readonly outputs: ReadonlyMap<string, string>
  readonly bytes: number
  readonly changed: ReadonlySet<string> | undefined
}

/** The state before the first step. */
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

/** Compares this step's render with the previous one: equal leading parts are skipped whole, then characters compared. */
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
  const previous = prev.rendered?.text ?? ''
  let end = offset
  const limit = Math.min(previous.length, text.length)
  while (end < limit && previous.charCodeAt(end) === text.charCodeAt(end)) end++
  const whole = wholeCodePoints(text, previous, end)
  const bytes = utf8Length(text, 0, whole)

  // Name → output, first occurrence winning (names are unique in a registry-made assembly).
  const outputs = new Map<string, string>()
  for (const { name, text } of parts) if (!outputs.has(name)) outputs.set(name, text)
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

/** `changed` in prompt order, each removed section right after the nearest earlier previous section still present. */
function inPromptOrder(changed: ReadonlySet<string>, before: readonly RenderedPart[], sections: readonly RenderedPart[]): string[] {
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
  const out = new Set<string>(removedAfter.get(undefined))
  for (const { name } of sections) {
    if (changed.has(name)) out.add(name)
    for (const gone of removedAfter.get(name) ?? []) out.add(gone)
  }
  return [...out]
}

