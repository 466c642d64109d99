/**
 * The phrases every promptloom error is built from, in one place, so the
 * messages the README catalogues read alike: the subject in quotes, where it
 * lives, the rule, then the way out. A scope key is read here only, and only
 * while a message is being built (keys are opaque otherwise).
 */

import { scopeLabel, type ScopeKey } from '../scope/scope-key.js'

/** A short description of a wrong value: `string "x"`, `number NaN`, `an object`, `null`, … */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
    case 'object':
      return 'an object'
    case 'function':
      return 'a function'
    case 'undefined':
      return 'undefined'
    default:
      return `${typeof value} ${String(value)}`
  }
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

/**
 * `tool provider #1 in scope "agent-1"`: numbered from 1 by position among
 * its layer's providers, as `inspect()` lists them (whose `index` is 0-based).
 */
export function toolProviderLabel(position: number, scope: ScopeKey | undefined): string {
  return `tool provider #${position + 1}${inScope(scope)}`
}
