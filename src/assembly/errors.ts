// The phrases error messages are built from, so they read alike. Scope keys are read here only, while a message is built.

import { scopeLabel } from '../scope/scope-key.js'
import type { LayerRef } from './entries.js'

/** A short description of a wrong value: `string "x"`, `number NaN`, `an object`, `null`, … */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  return value === undefined ? 'undefined' : `${typeof value} ${String(value)}`
}

/** The `TypeError` for `subject`'s option `name` that is not `rule` (`toAnthropic option "ttl" must be …`), then `hint`. */
export function optionError(subject: string, name: string, rule: string, value: unknown, hint = ''): TypeError {
  return new TypeError(`${subject} option "${name}" must be ${rule} (got ${describeValue(value)})${hint}`)
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
