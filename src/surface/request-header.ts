/** The step surface's request header: config and tools compared step to step by their JSON (the bytes the model is sent). */

import type { CacheBreak } from './cache-break.js'

/** The config and tools of the last step, serialized; `tools` keeps the objects for the identity shortcut. */
export interface HeaderState {
  readonly configJson: string
  readonly tools: readonly unknown[]
  readonly toolJson: readonly string[]
  readonly names: readonly string[]
}

/**
 * Serializes the step's tools, reusing the JSON of a tool that is the same frozen object as last time
 * (`assemble()` hands back the same deep-frozen clone while a provider's schema is unchanged).
 */
export function headerStateOf(tools: readonly unknown[], configJson: string, previous: HeaderState | undefined): HeaderState {
  const toolJson = tools.map((tool, index) => {
    if (previous !== undefined && previous.tools[index] === tool && Object.isFrozen(tool)) {
      return previous.toolJson[index]!
    }
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
export interface ToolDiff {
  readonly added: string[]
  readonly removed: string[]
  readonly changed: string[]
  readonly reordered: boolean
}

/** Compares the tools of two headers by name and JSON. */
export function toolDiff(before: HeaderState, after: HeaderState): ToolDiff {
  const was = new Map<string, string>()
  before.names.forEach((name, i) => was.has(name) || was.set(name, before.toolJson[i]!))
  const now = new Map<string, string>()
  after.names.forEach((name, i) => now.has(name) || now.set(name, after.toolJson[i]!))
  const added = [...now.keys()].filter((name) => !was.has(name))
  const removed = [...was.keys()].filter((name) => !now.has(name))
  const changed = [...now.keys()].filter((name) => was.has(name) && was.get(name) !== now.get(name))
  const keptBefore = [...was.keys()].filter((name) => now.has(name))
  const keptAfter = [...now.keys()].filter((name) => was.has(name))
  return { added, removed, changed, reordered: keptBefore.some((name, i) => keptAfter[i] !== name) }
}

/**
 * Compares two headers by their serialization: `reason` is `'initial'` on the first step, `undefined` when config and tools
 * serialize the same; `tools` holds the tools' names by change (frozen) when the tools changed.
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
    const details: string[] = []
    if (added.length > 0) details.push(`added ${added.join(', ')}`)
    if (removed.length > 0) details.push(`removed ${removed.join(', ')}`)
    if (changed.length > 0) details.push(`changed ${changed.join(', ')}`)
    if (reordered) details.push('reordered')
    reasons.push(details.length === 0 ? 'tools changed' : `tools changed (${details.join('; ')})`)
  }
  if (configChanged) reasons.push('config changed')
  return { toolsChanged, configChanged, reason: reasons.length === 0 ? undefined : reasons.join('; '), ...(tools && { tools }) }
}
