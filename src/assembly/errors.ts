// Error phrases, so messages read alike, and the checkShape built on them. Scope keys are read here only, to build a message.

import { describeValue, scopeLabel, type ScopeKey } from '../scope/scope-key.js'
import type { LayerRef } from './entries.js'

export { describeValue }

/** The `Error` for `what` (`assemble() cannot run`) through a `systemPrompt` service whose plugin was unloaded. */
export function disposedService(what: string, verb: string): Error {
  const why = 'this "systemPrompt" service is disposed; its plugin was unloaded'
  return new Error(`${what}: ${why}, so ${verb} through the ctx.systemPrompt of a loaded SystemPrompt plugin`)
}

/** The `Error` for refreshing a result assembled for scope `from` with another scope, `to`. */
export function wrongScope(from: ScopeKey | undefined, to: ScopeKey | undefined): Error {
  const rule = 'its contexts would be read from the wrong registry; pass the scope it was assembled for'
  return new Error(`an accepted result assembled for ${viewName(from)} cannot be refreshed for ${viewName(to)}: ${rule}`)
}

/** The `TypeError` for `subject`'s option `name` that is not `rule` (`toAnthropic option "ttl" must be …`), then `hint`. */
export function optionError(subject: string, name: string, rule: string, value: unknown, hint = ''): TypeError {
  return new TypeError(`${subject} option "${name}" must be ${rule} (got ${describeValue(value)})${hint}`)
}

/** Who handed over a malformed value: messages read `${is} null; ${fix}` and `${has} sections[2] = null; every …`. */
export type Culprit = { readonly is: string; readonly has: string; readonly fix: string; readonly kind?: typeof Error }

/** Whether `item` is an object with a string `name` and `text`, as every section and context must be. */
export function isNamedText(item: unknown): boolean {
  const named = item as { name?: unknown; text?: unknown } | null
  return typeof named === 'object' && named !== null && typeof named.name === 'string' && typeof named.text === 'string'
}

/** The error for `value[field][index] = item`, an item that is not `isNamedText`. */
export function badItem(culprit: Culprit, field: 'sections' | 'contexts', index: number, item: unknown): Error {
  const held = describeValue(item)
  const named = item as { name?: unknown; text?: unknown }
  const shown = held === 'an object' ? `{ name: ${describeValue(named.name)}, text: ${describeValue(named.text)} }` : held
  const rule = `every ${field.slice(0, -1)} needs a string name and text`
  return new (culprit.kind ?? Error)(`${culprit.has} ${field}[${index}] = ${shown}; ${rule}`)
}

/** Throws `culprit.kind` (default `Error`) unless `value` has a `variables` record and, for each of `fields`, an array. */
export function checkRecord(culprit: Culprit, value: unknown, fields: readonly ('sections' | 'contexts')[]): void {
  const shape = value as Readonly<Record<string, unknown>> | null
  let missing = typeof shape !== 'object' || shape === null ? describeValue(shape) : undefined
  for (let f = 0; missing === undefined && f < fields.length; f++) {
    if (!Array.isArray(shape![fields[f]!])) missing = `an object without a ${fields[f]} array`
  }
  const variables = shape?.variables
  if (missing === undefined && (typeof variables !== 'object' || !variables)) missing = 'an object without a variables record'
  if (missing !== undefined) throw new (culprit.kind ?? Error)(`${culprit.is} ${missing}; ${culprit.fix}`)
}

/**
 * `checkRecord`, then every item of `fields` must be `isNamedText`; with `values`, every own variable value must be a
 * string or undefined too. Allocates nothing unless it throws.
 */
export function checkShape(culprit: Culprit, value: unknown, fields: readonly ('sections' | 'contexts')[], values = false): void {
  checkRecord(culprit, value, fields)
  const shape = value as Readonly<Record<string, readonly unknown[]>>
  for (let f = 0; f < fields.length; f++) {
    const items = shape[fields[f]!]!
    for (let i = 0; i < items.length; i++) if (!isNamedText(items[i])) throw badItem(culprit, fields[f]!, i, items[i])
  }
  if (!values) return
  const variables = shape.variables as unknown as Readonly<Record<string, unknown>>
  for (const name in variables) {
    const held = variables[name]
    if (typeof held === 'string' || held === undefined || !Object.hasOwn(variables, name)) continue
    const rule = 'every variable value must be a string or undefined'
    throw new (culprit.kind ?? Error)(`${culprit.has} variables.${name} = ${describeValue(held)}; ${rule}`)
  }
}

/** A phrase about `scope`: `global` for the global layer, else `scoped` followed by the quoted scope label. */
const phrase = (global: string, scoped: string) => (scope: LayerRef | undefined) =>
  scope === undefined || scope === 'global' ? global : `${scoped} "${scopeLabel(scope)}"`

/** ` in scope "agent-1"` for a scoped entry, `''` for a global one: appended to a subject. */
export const inScope = phrase('', ' in scope')
/** `in scope "agent-1"`, or `in the global layer`: where a registration lives. */
export const layerPhrase = phrase('in the global layer', 'in scope')
/** `scope "agent-1"`, or `the global view`: which view an assembly was made for. */
export const viewName = phrase('the global view', 'scope')

/** `prompt section "intro"`, plus ` in scope "agent-1"` for a scoped entry. */
export function entryLabel(kind: string, name: string, scope: LayerRef | undefined): string {
  return `${kind} "${name}"${inScope(scope)}`
}
