import { TOOL_ORDER_REST } from './orders.js'
import { type ToolEntry } from './entries.js'
import { deepFreeze } from './deep-freeze.js'
import { describeValue, inScope } from './errors.js'
import type { ToolSchema } from './types.js'

/** A detached clone with the schema fields it was made from (by identity). */
interface Detached {
  readonly name: unknown
  readonly description: unknown
  readonly parameters: unknown
  readonly clone: ToolSchema
}

/**
 * Detaches tool schemas from their providers: each schema is cloned and deep-frozen once, and the
 * clone is reused while the provider returns that same object with the same `name`, `description`
 * and `parameters` (by identity); a deep edit inside the same `parameters` object is not seen.
 * Held weakly, so a dropped schema takes its clone with it.
 */
export class ToolDetacher {
  readonly #clones = new WeakMap<object, Detached>()
  /** The number of clones made so far. */
  clones = 0

  detach(schema: ToolSchema, label: string): ToolSchema {
    const { name, description, parameters } = schema
    const held = this.#clones.get(schema)
    if (held !== undefined && held.name === name && held.description === description && held.parameters === parameters) {
      return held.clone
    }
    let clone: ToolSchema
    try {
      clone = deepFreeze(structuredClone(schema))
    } catch (error) {
      throw new TypeError(
        `tool "${name}" from ${label} cannot be detached: its schema must be plain JSON-like data (${(error as Error).message})`,
      )
    }
    this.#clones.set(schema, { name, description, parameters, clone })
    this.clones++
    return clone
  }
}

/**
 * Validates the providers' raw results (each with the label naming its provider) and returns the
 * detached tools, ordered as `orderToolNames` says. Throws when a result is not `{ schemas }`, a
 * schema has no string name or uses the reserved `TOOL_ORDER_REST`, two schemas share a name, or
 * `toolOrder` lists a name outside every provider's `knownNames`.
 */
export function collectTools(
  provided: readonly { readonly result: unknown; readonly label: string }[],
  toolOrder: readonly string[] | undefined,
  detacher: ToolDetacher,
): ToolSchema[] {
  const byName = new Map<string, { schema: ToolSchema; label: string }>()
  const known = new Set<string>()
  for (const { result, label } of provided) {
    const schemas = (result as { schemas?: unknown } | null)?.schemas
    if (typeof result !== 'object' || result === null || !Array.isArray(schemas)) {
      throw new TypeError(
        `${label} must return { schemas: ToolSchema[], knownNames? } (got ${describeValue(result)}); return an empty schemas array to contribute no tool`,
      )
    }
    const own: string[] = []
    for (const schema of schemas as unknown[]) {
      const name = (schema as { name?: unknown } | null)?.name
      if (typeof schema !== 'object' || schema === null || typeof name !== 'string' || name === '') {
        throw new TypeError(
          `${label} returned a tool schema without a string name (got ${describeValue(schema)}); every tool needs { name, description, parameters }`,
        )
      }
      if (name === TOOL_ORDER_REST) {
        throw new Error(`${label} returned a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`)
      }
      const earlier = byName.get(name)
      if (earlier !== undefined) {
        throw new Error(`tool "${name}" is provided more than once (by ${earlier.label} and ${label}); tool names must be unique in an assembly`)
      }
      byName.set(name, { schema: schema as ToolSchema, label })
      own.push(name)
    }
    const declared = (result as { knownNames?: unknown }).knownNames
    const knownNames = declared === undefined ? own : declared
    if (!Array.isArray(knownNames) || !knownNames.every((n) => typeof n === 'string')) {
      throw new TypeError(`${label} returned knownNames that is not an array of tool names (got ${describeValue(knownNames)})`)
    }
    for (const name of knownNames as string[]) known.add(name)
  }
  return orderToolNames([...byName.keys()], toolOrder, known).map((name) => {
    const { schema, label } = byName.get(name)!
    return detacher.detach(schema, label)
  })
}

/**
 * `toolOrder`'s names at their position and the rest in code-unit order at `TOOL_ORDER_REST`;
 * without `toolOrder`, code-unit order. `known` is the union of the providers' `knownNames`.
 */
function orderToolNames(present: readonly string[], toolOrder: readonly string[] | undefined, known: ReadonlySet<string>): string[] {
  const sorted = [...present].sort()
  if (toolOrder === undefined) return sorted
  const unknown = toolOrder.filter((name) => name !== TOOL_ORDER_REST && !known.has(name))
  if (unknown.length > 0) {
    const list = unknown.map((name) => `"${name}"`).join(', ')
    const knownList = [...known].sort().join(', ') || 'none'
    throw new Error(`toolOrder lists unregistered tool${unknown.length > 1 ? 's' : ''} ${list}; known tools: ${knownList}`)
  }
  const presentSet = new Set(present)
  const listed = new Set(toolOrder)
  return toolOrder.flatMap((name) => {
    if (name === TOOL_ORDER_REST) return sorted.filter((rest) => !listed.has(rest))
    return presentSet.has(name) ? [name] : []
  })
}

/**
 * What a provider's result held when its tools were built, all by identity: its `schemas` and
 * `knownNames`, and each schema item followed by its `name`, `description` and `parameters` (four
 * entries per item in `items`). The tool memo is reused only while every provider hands back the
 * same objects in the same places, so a provider may return one result object and swap what it holds.
 */
interface ResultSnapshot {
  readonly schemas: unknown
  readonly knownNames: unknown
  readonly items: readonly unknown[] | undefined
}

/** The snapshot of one provider result, taken when its tools are built (before they are validated). */
export function snapshotOf(result: unknown): ResultSnapshot {
  const { schemas, knownNames } = (result ?? {}) as { schemas?: unknown; knownNames?: unknown }
  const items = Array.isArray(schemas) ? schemas.flatMap((item: unknown) => [item, ...fieldsOf(item)]) : undefined
  return { schemas, knownNames, items }
}

function fieldsOf(item: unknown): unknown[] {
  if (typeof item !== 'object' || item === null) return [undefined, undefined, undefined]
  const { name, description, parameters } = item as Partial<ToolSchema>
  return [name, description, parameters]
}

/** Whether every provider returned what its snapshot holds, so the memoized tools still apply. */
export function sameResults(before: readonly unknown[], snapshot: readonly ResultSnapshot[], now: readonly unknown[]): boolean {
  if (before.length !== now.length) return false
  for (let i = 0; i < now.length; i++) {
    const result = now[i] as { schemas?: unknown; knownNames?: unknown } | null
    const { schemas, knownNames, items } = snapshot[i]!
    if (result !== before[i] || result?.schemas !== schemas || result?.knownNames !== knownNames) return false
    if (items === undefined) continue
    const list = schemas as readonly unknown[]
    if (4 * list.length !== items.length) return false
    for (let k = 0; k < list.length; k++) {
      const item = list[k]
      if (item !== items[4 * k]) return false
      if (typeof item !== 'object' || item === null) continue
      const { name, description, parameters } = item as Partial<ToolSchema>
      if (name !== items[4 * k + 1] || description !== items[4 * k + 2] || parameters !== items[4 * k + 3]) return false
    }
  }
  return true
}

/** `tool provider #1 in scope "agent-1"`: numbered from 1 by position in its layer, as `inspect()` lists them. */
export function toolProviderLabel(entries: readonly ToolEntry[], index: number): string {
  const { scope } = entries[index]!
  let first = index
  while (first > 0 && entries[first - 1]!.scope === scope) first--
  return `tool provider #${index - first + 1}${inScope(scope)}`
}

/** The tools last built for one view, with the provider list and results they came from. */
export interface ToolMemo {
  readonly entries: readonly ToolEntry[]
  readonly results: readonly unknown[]
  readonly snapshot: readonly ResultSnapshot[]
  readonly tools: readonly ToolSchema[]
}
