/**
 * The step's prompt compared with the previous step's: the KV-cache prefix report, and why a step lost reuse
 * (SPEC §3 "Why the cache broke"), from the two prompts and the request header (config and tools compared by their JSON):
 *
 *   tools → config → system prompt          (the order providers cache in)
 *                      │
 *   the part at the first differing ─┬─ same section in both:  section (+ variable when only a value changed)
 *   position, in each prompt         ├─ left the prompt:       withheld (budget) / removed
 *                                    └─ entered it:            restored (budget) / added
 */

import type { LayerRef } from '../assembly/entries.js'
import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import { identicalPrefix } from '../render/explain.js'
import { utf8Length } from '../render/utf8.js'

/** The previous step's prompt, its UTF-8 bytes, and the sections that changed in it (`undefined` on the first step). */
interface PromptState {
  readonly rendered: RenderedPrompt | undefined
  readonly outputs: ReadonlyMap<string, string>
  readonly bytes: number
  readonly changed: ReadonlySet<string> | undefined
}

export const NO_PROMPT: PromptState = { rendered: undefined, outputs: new Map(), bytes: 0, changed: undefined }

/** How much of `rendered` is identical to the previous step's prompt and which sections changed, and the state to keep. */
export function prefixReportOf(prev: PromptState, rendered: RenderedPrompt) {
  const { text, parts } = rendered
  if (rendered === prev.rendered) {
    const next = { ...prev, changed: new Set<string>() }
    return { length: text.length, whole: text.length, bytes: prev.bytes, changedSet: next.changed, changedSections: [], next }
  }
  const before: readonly RenderedPart[] = prev.rendered?.parts ?? []
  const same = prev.rendered === undefined ? { parts: 0, length: 0, whole: 0 } : identicalPrefix(rendered, prev.rendered)
  const { parts: i, length: end, whole } = same
  const bytes = utf8Length(text, 0, whole)

  // Name → output; a name a listener repeated maps to all its outputs, so a change in any of them is seen.
  const outputs = new Map<string, string>()
  for (const { name, text } of parts) outputs.set(name, outputs.has(name) ? `${outputs.get(name)}\u0000${text}` : text)
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
    whole,
    bytes,
    changedSet: changed,
    changedSections: inPromptOrder(changed, before, outputs),
    next: { rendered, outputs, bytes: bytes + utf8Length(text, whole), changed: prev.rendered && changed },
  }
}

/** `changed` in the order of `present` (the sent names), each removed section right after the nearest earlier one still sent. */
function inPromptOrder(changed: ReadonlySet<string>, before: readonly RenderedPart[], present: ReadonlyMap<string, string>) {
  if (changed.size === 0) return []
  const removedAfter = new Map<string | undefined, string[]>()
  let anchor: string | undefined
  for (const { name } of before) {
    if (present.has(name)) anchor = name
    else if (changed.has(name)) removedAfter.set(anchor, [...(removedAfter.get(anchor) ?? []), name])
  }
  const out = new Set<string>(removedAfter.get(undefined))
  for (const name of present.keys()) {
    if (changed.has(name)) out.add(name)
    for (const gone of removedAfter.get(name) ?? []) out.add(gone)
  }
  return [...out]
}

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
  /** With `cause: 'tools'`: the tools added, removed, and in both but serialized differently (all empty when only reordered). */
  readonly tools?: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] }
}

/** What a step knows: the prompts sent (no `previous` on the first step), the changed tools, the budget's withheld sections. */
interface CacheBreakInput {
  readonly previous: RenderedPrompt | undefined
  readonly current: RenderedPrompt
  /** UTF-16 code units of `current.text` identical to `previous.text`. */
  readonly stableLength: number
  readonly tools: CacheBreak['tools'] | undefined
  readonly configChanged: boolean
  readonly withheldBefore: readonly string[]
  readonly withheldNow: readonly string[]
}

/** The first cause of lost reuse (tools, config, then the parts at the first difference) as a frozen `CacheBreak`, or `undefined`. */
export function cacheBreakOf(input: CacheBreakInput): CacheBreak | undefined {
  if (input.tools !== undefined) return Object.freeze({ cause: 'tools', tools: input.tools })
  if (input.configChanged) return Object.freeze({ cause: 'config' })
  const { previous, current, stableLength } = input
  if (previous === undefined || stableLength >= previous.text.length) return undefined
  const before = previous.parts
  // In each prompt, the last part starting at or before the first difference.
  const i = before.findLastIndex((part) => part.start <= stableLength)
  const gone = before[i]!
  const came = current.parts.findLast((part) => part.start <= stableLength)
  if (came !== undefined && came.name === gone.name) {
    if (came.text !== gone.text) return located('section', came, changedVariable(gone, came))
    // The same text ends here in both, and only the previous prompt goes on: what followed it left.
    const next = before[i + 1]
    return next === undefined ? located('section', gone) : (departed(next, input) ?? located('section', next))
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

function located(cause: CacheBreakCause, { name, layer }: RenderedPart, variable?: string): CacheBreak {
  return Object.freeze({ cause, section: name, ...(layer !== undefined && { layer }), ...(variable !== undefined && { variable }) })
}

/** The first variable (in first-use order) whose value changed the part; `undefined` when the template changed. */
function changedVariable(before: RenderedPart, after: RenderedPart): string | undefined {
  const a = before.substitutions
  const b = after.substitutions
  if (a.length !== b.length || a.length === 0) return undefined
  let changed: string | undefined
  let endA = 0
  let endB = 0
  for (const [i, x] of a.entries()) {
    const y = b[i]!
    if (x.variable !== y.variable || before.text.slice(endA, x.start) !== after.text.slice(endB, y.start)) return undefined
    if (changed === undefined && before.text.slice(x.start, x.end) !== after.text.slice(y.start, y.end)) changed = x.variable
    endA = x.end
    endB = y.end
  }
  return before.text.slice(endA) === after.text.slice(endB) ? changed : undefined
}

/** The config and tools of the last step, serialized; `tools` keeps the objects for the identity shortcut. */
export interface HeaderState {
  readonly configJson: string
  readonly tools: readonly unknown[]
  readonly toolJson: readonly string[]
  readonly names: readonly string[]
}

/** Serializes the tools, reusing the JSON of a frozen tool seen last time (`assemble()` keeps a clone while its schema holds). */
export function headerStateOf(tools: readonly unknown[], configJson: string, previous: HeaderState | undefined): HeaderState {
  const toolJson = tools.map((tool, index) => {
    if (previous !== undefined && previous.tools[index] === tool && Object.isFrozen(tool)) return previous.toolJson[index]!
    try {
      return JSON.stringify(tool)
    } catch (error) {
      throw new TypeError(`tool at position ${index} must be JSON-serializable for the session log (${String(error)})`)
    }
  })
  const names = tools.map((tool) => String((tool as { name?: unknown } | null)?.name))
  return { configJson, tools: tools.slice(), toolJson, names }
}

/**
 * How the tools changed between two headers, by name (a repeated name counts once, as first declared): names `added` and
 * `changed` (JSON differs) in their new order, `removed` in their old, and whether the names in both were `reordered`.
 */
export function toolDiff(before: HeaderState, after: HeaderState) {
  const byName = ({ names, toolJson }: HeaderState) => new Map(names.map((name) => [name, toolJson[names.indexOf(name)]!]))
  const [was, now] = [byName(before), byName(after)]
  const added = [...now.keys()].filter((name) => !was.has(name))
  const removed = [...was.keys()].filter((name) => !now.has(name))
  const changed = [...now.keys()].filter((name) => was.has(name) && was.get(name) !== now.get(name))
  const keptBefore = [...was.keys()].filter((name) => now.has(name))
  const keptAfter = [...now.keys()].filter((name) => was.has(name))
  return { added, removed, changed, reordered: keptBefore.some((name, i) => keptAfter[i] !== name) }
}

export type ToolDiff = ReturnType<typeof toolDiff>

/**
 * Compares two headers by their JSON: `reason` is `'initial'` on the first step, `undefined` when nothing changed;
 * `tools` (frozen) holds the tools' names by change when the tools changed.
 */
export function headerChange(before: HeaderState | undefined, after: HeaderState) {
  if (before === undefined) return { toolsChanged: false, configChanged: false, reason: 'initial' }
  const toolsChanged = before.toolJson.length !== after.toolJson.length || before.toolJson.some((json, i) => json !== after.toolJson[i])
  const configChanged = before.configJson !== after.configJson
  const reasons: string[] = []
  let tools: CacheBreak['tools']
  if (toolsChanged) {
    const { added, removed, changed, reordered } = toolDiff(before, after)
    tools = Object.freeze({ added: Object.freeze(added), removed: Object.freeze(removed), changed: Object.freeze(changed) })
    const details = Object.entries(tools).flatMap(([label, names]) => (names.length > 0 ? [`${label} ${names.join(', ')}`] : []))
    if (reordered) details.push('reordered')
    reasons.push(details.length === 0 ? 'tools changed' : `tools changed (${details.join('; ')})`)
  }
  if (configChanged) reasons.push('config changed')
  return { toolsChanged, configChanged, reason: reasons.length === 0 ? undefined : reasons.join('; '), ...(tools && { tools }) }
}
