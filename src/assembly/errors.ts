/*
 * The phrases promptloom's error messages are built from, so they read alike. A scope key is read
 * here only, and only while a message is being built (keys are opaque otherwise).
 */

import { scopeLabel, type ScopeKey } from '../scope/scope-key.js'

/** A short description of a wrong value: `string "x"`, `number NaN`, `an object`, `null`, … */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  return value === undefined ? 'undefined' : `${typeof value} ${String(value)}`
}

/** ` in scope "agent-1"` for a scoped entry, `''` for a global one: appended to a subject. */
export function inScope(scope: ScopeKey | undefined): string {
  return scope === undefined ? '' : ` in scope "${scopeLabel(scope)}"`
}

/** `in scope "agent-1"`, or `in the global layer`: where a registration lives. */
export function layerPhrase(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'in the global layer' : `in scope "${scopeLabel(scope)}"`
}

/** `scope "agent-1"`, or `the global view`: which view an assembly was made for. */
export function viewName(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'the global view' : `scope "${scopeLabel(scope)}"`
}

/** `prompt section "intro"`, plus ` in scope "agent-1"` for a scoped entry. */
export function entryLabel(kind: string, name: string, scope: ScopeKey | undefined): string {
  return `${kind} "${name}"${inScope(scope)}`
}
