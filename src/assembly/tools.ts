import { TOOL_ORDER_REST } from './orders.js'
import { type ToolEntry } from './entries.js'
import { deepFreeze } from './deep-freeze.js'
import { describeValue, toolProviderLabel as providerLabel } from './errors.js'
import type { ToolSchema } from './types.js'

/** One provider's raw result in an assembly, with the label that names the provider. */
export interface ProvidedTools {
  readonly result: unknown
  readonly label: string
}

/** A detached clone with the schema fields it was made from (by identity). */
interface Detached {
  readonly name: unknown
  readonly description: unknown
  readonly parameters: unknown
  readonly clone: ToolSchema
}

/**
 * Detaches tool schemas from their providers: each schema object is cloned
 * (`structuredClone`) and deep-frozen once, and the clone is reused for as
 * long as the provider keeps returning that same object with the same
 * `name`, `description` and `parameters` (by identity). Held weakly, so a
 * schema the provider dropped takes its clone with it.
 *
 * A schema renamed or re-described in place, or given a new `parameters`
 * object, is cloned again; a deep edit inside the same `parameters` object is
 * not seen (return a new object for that).
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
 * Validates the providers' results and returns the model-facing tools:
 * detached copies ordered by `toolOrder` (listed names at their position,
 * unlisted tools in code-unit order at the rest entry) or, without
 * `toolOrder`, in code-unit order.
 *
 * Throws when a result is not `{ schemas: ToolSchema[] }` ("tool"), a schema
 * has no string name, a schema uses the reserved `TOOL_ORDER_REST`, two
 * schemas share a name, or `toolOrder` lists a name outside every provider's
 * `knownNames` ("unregistered tool", naming each).
 */
export function collectTools(
  provided: readonly ProvidedTools[],
  toolOrder: readonly string[] | undefined,
  detacher: ToolDetacher,
): ToolSchema[] {
  const byName = new Map<string, { schema: ToolSchema; label: string }>()
  const known = new Set<string>()
  for (const { result, label } of provided) {
    const own: string[] = []
    const schemas = (result as { schemas?: unknown } | null)?.schemas
    if (typeof result !== 'object' || result === null || !Array.isArray(schemas)) {
      throw new TypeError(
        `${label} must return { schemas: ToolSchema[], knownNames? } (got ${describeValue(result)}); return an empty schemas array to contribute no tool`,
      )
    }
    for (const schema of schemas as unknown[]) {
      const name = (schema as { name?: unknown } | null)?.name
      if (typeof schema !== 'object' || schema === null || typeof name !== 'string' || name === '') {
        throw new TypeError(
          `${label} returned a tool schema without a string name (got ${describeValue(schema)}); every tool needs { name, description, parameters }`,
        )
      }
      if (name === TOOL_ORDER_REST) {
        throw new Error(
          `${label} returned a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`,
        )
      }
      const earlier = byName.get(name)
      if (earlier !== undefined) {
        throw new Error(
          `tool "${name}" is provided more than once (by ${earlier.label} and ${label}); tool names must be unique in an assembly`,
        )
      }
      byName.set(name, { schema: schema as ToolSchema, label })
      own.push(name)
    }
    const knownNames = (result as { knownNames?: unknown }).knownNames
    if (knownNames === undefined) {
      for (const name of own) known.add(name)
    } else if (Array.isArray(knownNames) && knownNames.every((n) => typeof n === 'string')) {
      for (const name of knownNames as string[]) known.add(name)
    } else {
      throw new TypeError(`${label} returned knownNames that is not an array of tool names (got ${describeValue(knownNames)})`)
    }
  }
  const names = orderToolNames([...byName.keys()], toolOrder, known)
  return names.map((name) => {
    const { schema, label } = byName.get(name)!
    return detacher.detach(schema, label)
  })
}

/**
 * Orders tool names for the model: `toolOrder`'s names at their position,
 * the rest in code-unit order at `TOOL_ORDER_REST`; without `toolOrder`,
 * code-unit order. `known` is the union of the providers' `knownNames`.
 */
function orderToolNames(
  present: readonly string[],
  toolOrder: readonly string[] | undefined,
  known: ReadonlySet<string>,
): string[] {
  const sorted = [...present].sort()
  if (toolOrder === undefined) return sorted
  const unknown = toolOrder.filter((name) => name !== TOOL_ORDER_REST && !known.has(name))
  if (unknown.length > 0) {
    const list = unknown.map((name) => `"${name}"`).join(', ')
    const knownList = [...known].sort().join(', ') || 'none'
    throw new Error(
      `toolOrder lists unregistered tool${unknown.length > 1 ? 's' : ''} ${list}; known tools: ${knownList}`,
    )
  }
  const presentSet = new Set(present)
  const listed = new Set(toolOrder)
  const ordered: string[] = []
  for (const name of toolOrder) {
    if (name === TOOL_ORDER_REST) {
      for (const rest of sorted) if (!listed.has(rest)) ordered.push(rest)
    } else if (presentSet.has(name)) {
      ordered.push(name)
    }
  }
  return ordered
}

/**
 * What a provider's result held when its tools were built: its `schemas`
 * array, that array's items, each item's `name`, `description` and
 * `parameters`, and its `knownNames`, all by identity. The tool memo is
 * reused only while every provider hands back the same objects in the same
 * places with the same fields, so a provider may also return one result
 * object and swap (or rename in place) what it holds.
 */
export interface ResultSnapshot {
  readonly schemas: unknown
  readonly items: readonly unknown[] | undefined
  /** `name`, `description`, `parameters` of each item, flattened (three per item). */
  readonly fields: readonly unknown[] | undefined
  readonly knownNames: unknown
}

/** Reads a schema's tracked fields without trusting its shape (the validation comes later). */
function pushFields(out: unknown[], item: unknown): void {
  if (typeof item === 'object' && item !== null) {
    const { name, description, parameters } = item as Partial<ToolSchema>
    out.push(name, description, parameters)
  } else out.push(undefined, undefined, undefined)
}

/** The snapshot of one provider result, taken when its tools are built. */
export function snapshotOf(result: unknown): ResultSnapshot {
  const { schemas, knownNames } = (result ?? {}) as { schemas?: unknown; knownNames?: unknown }
  if (!Array.isArray(schemas)) return { schemas, items: undefined, fields: undefined, knownNames }
  const fields: unknown[] = []
  for (const item of schemas) pushFields(fields, item)
  return { schemas, items: schemas.slice(), fields, knownNames }
}

/** Whether every provider returned what its snapshot holds, so the memoized tools still apply. */
export function sameResults(before: readonly unknown[], snapshot: readonly ResultSnapshot[], now: readonly unknown[]): boolean {
  if (before.length !== now.length) return false
  for (let i = 0; i < now.length; i++) {
    const result = now[i] as { schemas?: unknown; knownNames?: unknown } | null
    const held = snapshot[i]!
    if (result !== before[i] || result?.schemas !== held.schemas || result?.knownNames !== held.knownNames) return false
    const { items, fields } = held
    if (items === undefined) continue
    const schemas = result!.schemas as readonly unknown[]
    if (schemas.length !== items.length) return false
    for (let k = 0; k < items.length; k++) {
      const item = schemas[k]
      if (item !== items[k]) return false
      if (typeof item !== 'object' || item === null) continue
      const { name, description, parameters } = item as Partial<ToolSchema>
      if (name !== fields![3 * k] || description !== fields![3 * k + 1] || parameters !== fields![3 * k + 2]) return false
    }
  }
  return true
}

/** `tool provider #1 in scope "agent-1"`: numbered from 1 by position in its layer. */
export function toolProviderLabel(entries: readonly ToolEntry[], index: number): string {
  const { scope } = entries[index]!
  let first = index
  while (first > 0 && entries[first - 1]!.scope === scope) first--
  return providerLabel(index - first, scope)
}

/** The tools last built for one view, with the provider list and results they came from. */
export interface ToolMemo {
  readonly entries: readonly ToolEntry[]
  readonly results: readonly unknown[]
  readonly snapshot: readonly ResultSnapshot[]
  readonly tools: readonly ToolSchema[]
}
