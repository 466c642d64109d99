import { TOOL_ORDER_REST } from './orders.js'
import { type ToolEntry } from './entries.js'
import { describeValue, inScope } from './errors.js'
import type { ToolSchema } from './types.js'

/**
 * Clones and deep-freezes each schema once, reusing the clone (held weakly) while the provider returns the same
 * object with the same `name`, `description` and `parameters` by identity: a deep edit inside `parameters` is not seen.
 */
export class ToolDetacher {
  readonly #clones = new WeakMap<object, ToolSchema & { readonly clone: ToolSchema }>()
  clones = 0

  detach(schema: ToolSchema, label: () => string): ToolSchema {
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
        `tool "${name}" from ${label()} cannot be detached: its schema must be plain JSON-like data (${(error as Error).message})`,
      )
    }
    this.#clones.set(schema, { name, description, parameters, clone })
    this.clones++
    return clone
  }
}

/** Freezes `value` and all it reaches through own keys, in place; a frozen object is taken as frozen all the way down. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key])
  }
  return value
}

type Provided = { readonly result: unknown; readonly label: () => string }

/**
 * The detached tools of the providers' results: `toolOrder`'s names in place, the rest in code-unit order at
 * `TOOL_ORDER_REST` (or all in code-unit order). Throws for a result that is not `{ schemas }`, a nameless,
 * reserved or duplicate tool name, or a `toolOrder` name outside every provider's `knownNames`.
 */
export function collectTools(provided: readonly Provided[], toolOrder: readonly string[] | undefined, detacher: ToolDetacher) {
  const byName = new Map<string, { schema: ToolSchema; label: () => string }>()
  const known = new Set<string>()
  for (const { result, label } of provided) {
    const schemas = (result as { schemas?: unknown } | null)?.schemas
    if (typeof result !== 'object' || result === null || !Array.isArray(schemas)) {
      throw new TypeError(
        `${label()} must return { schemas: ToolSchema[], knownNames? } (got ${describeValue(result)}); return an empty schemas array to contribute no tool`,
      )
    }
    const own: string[] = []
    for (const schema of schemas as unknown[]) {
      const name = (schema as { name?: unknown } | null)?.name
      if (typeof schema !== 'object' || schema === null || typeof name !== 'string' || name === '') {
        throw new TypeError(
          `${label()} returned a tool schema without a string name (got ${describeValue(schema)}); every tool needs { name, description, parameters }`,
        )
      }
      if (name === TOOL_ORDER_REST) {
        throw new Error(`${label()} returned a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`)
      }
      const earlier = byName.get(name)
      if (earlier !== undefined) {
        throw new Error(`tool "${name}" is provided more than once (by ${earlier.label()} and ${label()}); tool names must be unique in an assembly`)
      }
      byName.set(name, { schema: schema as ToolSchema, label })
      own.push(name)
    }
    const declared = (result as { knownNames?: unknown }).knownNames
    const knownNames = declared === undefined ? own : declared
    if (!Array.isArray(knownNames) || !knownNames.every((n) => typeof n === 'string')) {
      throw new TypeError(`${label()} returned knownNames that is not an array of tool names (got ${describeValue(knownNames)})`)
    }
    for (const name of knownNames as string[]) known.add(name)
  }
  const sorted = [...byName.keys()].sort()
  let names = sorted
  if (toolOrder !== undefined) {
    const unknown = toolOrder.filter((name) => name !== TOOL_ORDER_REST && !known.has(name))
    if (unknown.length > 0) {
      const list = unknown.map((name) => `"${name}"`).join(', ')
      const knownList = [...known].sort().join(', ') || 'none'
      throw new Error(`toolOrder lists unregistered tool${unknown.length > 1 ? 's' : ''} ${list}; known tools: ${knownList}`)
    }
    const listed = new Set(toolOrder)
    names = toolOrder.flatMap((name) => {
      if (name === TOOL_ORDER_REST) return sorted.filter((rest) => !listed.has(rest))
      return byName.has(name) ? [name] : []
    })
  }
  return names.map((name) => {
    const { schema, label } = byName.get(name)!
    return detacher.detach(schema, label)
  })
}

/**
 * By identity: a provider's result, its `schemas` and `knownNames`, then each item with its `name`, `description`
 * and `parameters`. The tool memo holds while every provider hands back the same objects in the same places.
 */
export type ResultSnapshot = readonly unknown[]
type ResultFields = { schemas?: unknown; knownNames?: unknown } | null
type ItemFields = Partial<ToolSchema> | null | undefined

/** The snapshot of one provider result, taken when its tools are built. */
export function snapshotOf(result: unknown): ResultSnapshot {
  const { schemas, knownNames } = (result ?? {}) as NonNullable<ResultFields>
  if (!Array.isArray(schemas)) return [result, schemas, knownNames]
  const items = schemas.flatMap((item: ItemFields) => [item, item?.name, item?.description, item?.parameters])
  return [result, schemas, knownNames, ...items]
}

/** Whether every provider returned what its snapshot holds, so the memoized tools still apply. */
export function sameResults(snapshot: readonly ResultSnapshot[], now: readonly unknown[]): boolean {
  if (snapshot.length !== now.length) return false
  for (let i = 0; i < now.length; i++) {
    const result = now[i] as ResultFields
    const held = snapshot[i]!
    if (result !== held[0] || result?.schemas !== held[1] || result?.knownNames !== held[2]) return false
    const list = held[1]
    if (!Array.isArray(list)) continue
    if (held.length !== 3 + 4 * list.length) return false
    for (let k = 0, at = 3; k < list.length; k++, at += 4) {
      const item = list[k] as ItemFields
      if (item !== held[at] || item?.name !== held[at + 1]) return false
      if (item?.description !== held[at + 2] || item?.parameters !== held[at + 3]) return false
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
