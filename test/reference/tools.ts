import { TOOL_ORDER_REST } from '../../src/assembly/orders.js'
import type { AssembleContext, ToolProvider, ToolSchema } from '../../src/assembly/types.js'
import { byCodeUnit, describe, evaluateSource } from './layers.js'

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

/**
 * Evaluates every provider in the given order and returns detached
 * (`structuredClone`d) schemas ordered by `toolOrder` (listed names at their
 * position, unlisted ones by code-unit name at the rest entry) or, without
 * it, by code-unit name.
 *
 * Throws `TypeError` for a malformed provider result or schema, and `Error`
 * for the reserved name, a name provided twice, or a `toolOrder` name that no
 * provider's `knownNames` contains (naming each such tool).
 */
export function referenceCollectTools(
  providers: readonly ToolProvider[],
  context: AssembleContext,
  toolOrder: readonly string[] | undefined,
): ToolSchema[] {
  const present = new Map<string, ToolSchema>()
  const known = new Set<string>()
  providers.forEach((provider, index) => {
    const result = evaluateSource(provider, context) as { schemas?: unknown; knownNames?: unknown }
    if (typeof result !== 'object' || result === null || !Array.isArray(result.schemas)) {
      throw new TypeError(
        `tool provider #${index + 1} must return { schemas: ToolSchema[] } (got ${describe(result)}${
          typeof result === 'object' && result !== null ? ` without a "schemas" array` : ''
        })`,
      )
    }
    const names: string[] = []
    for (const schema of result.schemas as unknown[]) {
      const name = (schema as { name?: unknown } | null)?.name
      if (typeof schema !== 'object' || schema === null || typeof name !== 'string') {
        throw new TypeError(`tool provider #${index + 1} returned a tool schema without a string "name"`)
      }
      if (name === TOOL_ORDER_REST) {
        throw new Error(
          `tool provider #${index + 1} returned a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder; rename the tool`,
        )
      }
      if (present.has(name)) {
        throw new Error(`tool "${name}" is provided more than once; each tool name must come from one provider`)
      }
      present.set(name, schema as ToolSchema)
      names.push(name)
    }
    const knownNames = result.knownNames === undefined ? names : (result.knownNames as Iterable<string>)
    for (const name of knownNames) known.add(name)
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
          .join(', ')}; known tools: ${knownList === '' ? '(none)' : knownList}`,
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
  return ordered.map((name) => structuredClone(present.get(name)!))
}
