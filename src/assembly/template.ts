/*
 * The pure `{{name}}` template engine behind rendering: plain strings in, plain strings out.
 *
 * One left-to-right scan with `indexOf`: a group opens at `{{` and closes at the FIRST `}}` after
 * it; its content must be a variable name. A `{{` with no `}}` after it cannot close, and neither can
 * any later `{{`, so the scan stops there and the rest is literal. Compiling is linear in the text.
 *
 *   "Hi {{user}}, it is {{date}}."
 *    └─┬┘└─┬──┘└────┬────┘└─┬──┘└┬┘
 *   parts[0] refs[0] parts[1] refs[1] parts[2]
 */

import { describeValue } from './errors.js'

/** A compiled template: literal parts around variable references; parts.length === refs.length + 1. */
export interface Template {
  readonly parts: readonly string[]
  readonly refs: readonly string[]
}

/** What a prompt variable's name must match, here and at registration. */
export const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/

/** Names the entry a template belongs to in errors; a function is asked only when an error is thrown. */
type TemplateOwner = string | (() => string)
type Variables = Readonly<Record<string, string | undefined>>

function nameOf(owner: TemplateOwner): string {
  return typeof owner === 'string' ? owner : owner()
}

/** Scans `text` once into parts and references; throws "malformed prompt variable reference" for the first bad group. */
export function compileTemplate(text: string, owner: TemplateOwner): Template {
  const parts: string[] = []
  const refs: string[] = []
  let literalStart = 0
  for (let open = text.indexOf('{{'); open >= 0; open = text.indexOf('{{', literalStart)) {
    const close = text.indexOf('}}', open + 2)
    if (close < 0) break
    const name = text.slice(open + 2, close)
    if (!VARIABLE_NAME.test(name)) throw malformedReference(text.slice(open, close + 2), nameOf(owner))
    parts.push(text.slice(literalStart, open))
    refs.push(name)
    literalStart = close + 2
  }
  parts.push(literalStart === 0 ? text : text.slice(literalStart))
  return { parts: Object.freeze(parts), refs: Object.freeze(refs) }
}

/**
 * Substitutes each reference with its own-property value, never rescanning values. Throws for the first reference that
 * is not an own key ("unknown prompt variable"), whose value is `undefined` ("has no value") or another non-string.
 */
export function fillTemplate(template: Template, variables: Variables, owner: TemplateOwner): string {
  const { parts, refs } = template
  let out = parts[0]!
  for (let i = 0; i < refs.length; i++) {
    const name = refs[i]!
    if (!Object.hasOwn(variables, name)) throw unknownVariable(name, variables, nameOf(owner))
    const value: unknown = variables[name]
    if (typeof value !== 'string') throw valueError(name, value, nameOf(owner))
    out += value + parts[i + 1]
  }
  return out
}

/** The render error for a malformed group (`{{ x }}`, `{{}}`) in `owner`, ending in `remedy`; shared with diagnostics. */
export function malformedReference(
  group: string,
  owner: string,
  remedy = ', or register the entry with `interpolate: false` to keep its text literal',
): Error {
  // A long group is shortened so a huge text stays readable.
  const shown = group.length > 64 ? `${group.slice(0, 48)}…${group.slice(-12)}` : group
  const rule = 'write {{name}} with a lowercase name matching /^[a-z][a-z0-9_]*$/'
  return new Error(`malformed prompt variable reference ${JSON.stringify(shown)} in ${owner}; ${rule}${remedy}`)
}

/** The render error for a reference to a name that is not an own key of `variables`; shared with diagnostics. */
export function unknownVariable(name: string, variables: Variables, owner: string): Error {
  const known = Object.getOwnPropertyNames(variables).sort()
  return new Error(
    `unknown prompt variable "{{${name}}}" in ${owner}; registered variables: ${known.length === 0 ? 'none' : known.join(', ')}`,
  )
}

/** The render error for a reference to a variable whose value is `undefined` (a `TypeError` for any other non-string). */
export function valueError(name: string, value: unknown, owner: string): Error {
  if (value === undefined) {
    return new Error(`prompt variable "${name}" has no value in ${owner}; its provider returned undefined for this assembly`)
  }
  const rule = 'a variable value must be a string, or undefined for no value'
  return new TypeError(`prompt variable "${name}" is ${describeValue(value)} in ${owner}; ${rule}`)
}

/** One `{{…}}` group found by `scanGroups`: a well-formed reference, or a malformed group as written. */
export type TemplateGroup = { readonly name: string; readonly malformed?: undefined } | { readonly malformed: string; readonly name?: undefined }

/** Every group of `text` in order, by `compileTemplate`'s rules, but past a malformed one: diagnostics report every problem. */
export function scanGroups(text: string): TemplateGroup[] {
  const out: TemplateGroup[] = []
  for (let open = text.indexOf('{{'); open >= 0; ) {
    const close = text.indexOf('}}', open + 2)
    if (close < 0) break
    const name = text.slice(open + 2, close)
    out.push(VARIABLE_NAME.test(name) ? { name } : { malformed: text.slice(open, close + 2) })
    open = text.indexOf('{{', close + 2)
  }
  return out
}
