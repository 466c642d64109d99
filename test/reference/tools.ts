import type { AssembleContext, ToolProvider, ToolSchema } from '../../src/assembly/types.js'
import { describe, evaluate } from './entries.js'
import { REFERENCE_TOOL_ORDER_REST as TOOL_ORDER_REST } from './orders.js'
import { scopeName } from './scope.js'
import type { ScopeKey } from '../../src/scope/scope-key.js'

/** Code-unit string order for `Array.prototype.sort`. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Validates a `toolOrder` config value: an array of strings naming each tool
 * at most once and containing `TOOL_ORDER_REST` exactly once. Throws
 * `TypeError` otherwise; returns a copy.
 */
export function referenceValidateToolOrder(toolOrder: unknown): string[] {
  if (!Array.isArray(toolOrder)) {
    throw new TypeError(`config "toolOrder" must be an array of tool names (got ${describe(toolOrder)})`)
  }
  const seen = new Set<string>()
  for (const entry of toolOrder as unknown[]) {
    if (typeof entry !== 'string') {
      throw new TypeError(`config "toolOrder" entries must be strings (got ${describe(entry)})`)
    }
    if (seen.has(entry)) {
      throw new TypeError(`config "toolOrder" lists "${entry}" more than once; name each tool once`)
    }
    seen.add(entry)
  }
  if (!seen.has(TOOL_ORDER_REST)) {
    throw new TypeError(
      `config "toolOrder" must contain "${TOOL_ORDER_REST}" exactly once, to place the tools it does not list`,
    )
  }
  return [...(toolOrder as string[])]
}

/** One visible provider and where it sits: its layer's scope and its position in that layer. */
export interface PlacedProvider {
  readonly provider: ToolProvider
  readonly scope: ScopeKey | undefined
  readonly index: number
}

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.freeze(value)
    for (const key of Reflect.ownKeys(value)) freezeDeep((value as Record<PropertyKey, unknown>)[key])
  }
  return value
}

/**
 * Evaluates every provider (all of them, in the given order, before looking
 * at any result), validates each result, and returns fresh deep-frozen
 * `structuredClone`s of the schemas ordered by `toolOrder` (listed names at
 * their position, unlisted ones by code-unit name at the rest entry) or,
 * without it, by code-unit name. Every call reads each schema's current
 * fields: nothing is cached.
 *
 * Throws `TypeError` for a malformed result, schema or `knownNames`, and
 * `Error` for the reserved name, a name provided twice, or a `toolOrder` name
 * that no provider's `knownNames` contains (naming each such tool).
 */
export function referenceCollectTools(
  providers: readonly PlacedProvider[],
  context: AssembleContext,
  toolOrder: readonly string[] | undefined,
): ToolSchema[] {
  const results = providers.map(({ provider }) => evaluate(provider, context))
  const present = new Map<string, { schema: ToolSchema; label: string }>()
  const known = new Set<string>()
  providers.forEach(({ scope, index }, i) => {
    const label = `tool provider #${index + 1}${scope === undefined ? '' : ` in scope "${scopeName(scope)}"`}`
    const result = results[i] as { schemas?: unknown; knownNames?: unknown } | null
    if (typeof result !== 'object' || result === null || !Array.isArray(result.schemas)) {
      throw new TypeError(
        `${label} must return { schemas: ToolSchema[], knownNames? } (got ${describe(result)}); return an empty schemas array to contribute no tool`,
      )
    }
    const names: string[] = []
    for (const schema of result.schemas as unknown[]) {
      const name = (schema as { name?: unknown } | null)?.name
      if (typeof schema !== 'object' || schema === null || typeof name !== 'string' || name === '') {
        throw new TypeError(
          `${label} returned a tool schema without a string name (got ${describe(schema)}); every tool needs { name, description, parameters }`,
        )
      }
      if (name === TOOL_ORDER_REST) {
        throw new Error(
          `${label} returned a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`,
        )
      }
      const earlier = present.get(name)
      if (earlier !== undefined) {
        throw new Error(
          `tool "${name}" is provided more than once (by ${earlier.label} and ${label}); tool names must be unique in an assembly`,
        )
      }
      present.set(name, { schema: schema as ToolSchema, label })
      names.push(name)
    }
    const { knownNames } = result
    if (knownNames === undefined) {
      for (const name of names) known.add(name)
    } else if (Array.isArray(knownNames) && knownNames.every((name) => typeof name === 'string')) {
      for (const name of knownNames as string[]) known.add(name)
    } else {
      throw new TypeError(`${label} returned knownNames that is not an array of tool names (got ${describe(knownNames)})`)
    }
  })

  const sortedPresent = [...present.keys()].sort(byCodeUnit)
  let ordered: string[]
  if (toolOrder === undefined) {
    ordered = sortedPresent
  } else {
    const unregistered = toolOrder.filter((name) => name !== TOOL_ORDER_REST && !known.has(name))
    if (unregistered.length > 0) {
      const knownList = [...known].sort(byCodeUnit).join(', ')
      throw new Error(
        `toolOrder lists unregistered tool${unregistered.length > 1 ? 's' : ''} ${unregistered
          .map((name) => `"${name}"`)
          .join(', ')}; known tools: ${knownList === '' ? 'none' : knownList}`,
      )
    }
    const listed = new Set(toolOrder)
    ordered = []
    for (const entry of toolOrder) {
      if (entry === TOOL_ORDER_REST) {
        for (const name of sortedPresent) if (!listed.has(name)) ordered.push(name)
      } else if (present.has(entry)) {
        ordered.push(entry)
      }
    }
  }
  return ordered.map((name) => {
    const { schema, label } = present.get(name)!
    let clone: ToolSchema
    try {
      clone = structuredClone(schema)
    } catch (error) {
      throw new TypeError(
        `tool "${name}" from ${label} cannot be detached: its schema must be plain JSON-like data (${(error as Error).message})`,
      )
    }
    return freezeDeep(clone)
  })
}
