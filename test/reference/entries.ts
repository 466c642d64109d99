import type { ReadonlySignal } from '@preact/signals-core'
import type { ScopeKey } from '../../src/scope/scope-key.js'
import type { AssembleContext } from '../../src/assembly/types.js'
import { scopeName } from './scope.js'

// What the oracle stores per registration, and the texts of the errors it
// throws while validating and evaluating them (the same texts SPEC §2 and the
// error catalogue promise, so the differential compares whole messages).

const SIGNAL_BRAND = Symbol.for('preact-signals')
const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/
const STABILITIES = ['static', 'session', 'volatile']

/** Whether `value` is a @preact/signals-core signal (recognised by the library's brand). */
export function isSignalLike(value: unknown): value is ReadonlySignal<unknown> {
  return typeof value === 'object' && value !== null && (value as { brand?: unknown }).brand === SIGNAL_BRAND
}

/** A short description of a wrong value: `null`, `an array`, `string "x"`, `number NaN`, … */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  if (value === undefined) return 'undefined'
  return `${typeof value} ${String(value)}`
}

/** `in the global layer` / `in scope "agent"`. */
export function layerPhrase(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'in the global layer' : `in scope "${scopeName(scope)}"`
}

/** `prompt section "intro"`, plus ` in scope "agent"` for a scoped entry. */
export function entryName(kind: string, name: string, scope: ScopeKey | undefined): string {
  return scope === undefined ? `${kind} "${name}"` : `${kind} "${name}" in scope "${scopeName(scope)}"`
}

/** A value source as registered: the raw string, signal or function. */
export type RawSource = string | ReadonlySignal<unknown> | ((context: AssembleContext) => unknown)

/** A registered section or context, copied at registration. */
export interface OrderedEntry {
  readonly name: string
  readonly label: string
  readonly order: number
  readonly source: RawSource
  readonly interpolate: boolean
  /** `complete` on a section, `required` on a context. */
  readonly flag: boolean
  /** A section's `required: true` (SPEC §5); always false for a context, whose `flag` is its `required`. */
  readonly required: boolean
}

/** A registered variable. */
export interface VariableEntry {
  readonly name: string
  readonly label: string
  readonly source: RawSource
}

function checkSource(label: string, what: string, value: unknown): RawSource {
  if (typeof value === 'string' || typeof value === 'function' || isSignalLike(value)) return value as RawSource
  throw new TypeError(`${label} ${what} must be a string, a signal or a function (got ${describe(value)})`)
}

function checkFlag(label: string, key: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  throw new TypeError(`${label} option "${key}" must be a boolean (got ${describe(value)})`)
}

/**
 * Validates a `section()`/`context()` argument in SPEC order (object, name,
 * order, text, interpolate, stability, flag) and copies it.
 */
export function orderedEntry(
  kind: 'prompt section' | 'runtime context',
  input: unknown,
  scope: ScopeKey | undefined,
): OrderedEntry {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(`${kind} must be an object with name, order and text (got ${describe(input)})`)
  }
  const raw = input as Record<string, unknown>
  if (typeof raw.name !== 'string' || raw.name === '') {
    const where = scope === undefined ? '' : ` in scope "${scopeName(scope)}"`
    throw new TypeError(`${kind} name${where} must be a non-empty string (got ${describe(raw.name)})`)
  }
  const label = entryName(kind, raw.name, scope)
  if (typeof raw.order !== 'number' || !Number.isFinite(raw.order)) {
    throw new TypeError(`${label} order must be a finite number (got ${describe(raw.order)})`)
  }
  const source = checkSource(label, 'text', raw.text)
  const interpolate = checkFlag(label, 'interpolate', raw.interpolate) !== false
  checkStability(label, raw.stability)
  const flag = checkFlag(label, kind === 'prompt section' ? 'complete' : 'required', kind === 'prompt section' ? raw.complete : raw.required)
  const required = kind === 'prompt section' && checkFlag(label, 'required', raw.required) === true
  return { name: raw.name, label, order: raw.order, source, interpolate, flag: flag === true, required }
}

function checkStability(label: string, value: unknown): void {
  if (value === undefined || STABILITIES.includes(value as string)) return
  throw new TypeError(`${label} stability must be one of "static", "session", "volatile" (got ${describe(value)})`)
}

/** Validates a `variable()` call and copies it. */
export function variableEntry(name: unknown, source: unknown, stability: unknown, scope: ScopeKey | undefined): VariableEntry {
  if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
    const where = scope === undefined ? '' : ` in scope "${scopeName(scope)}"`
    throw new TypeError(
      `invalid prompt variable name ${typeof name === 'string' ? `"${name}"` : describe(name)}${where}; names match /^[a-z][a-z0-9_]*$/ (lowercase letter first, then lowercase letters, digits or _)`,
    )
  }
  const label = entryName('prompt variable', name, scope)
  const checked = checkSource(label, 'value', source)
  checkStability(label, stability)
  return { name, label, source: checked }
}

/** Validates a `tools()` argument. */
export function checkToolProvider(provider: unknown, scope: ScopeKey | undefined): void {
  if (typeof provider === 'function' || isSignalLike(provider)) return
  const label = scope === undefined ? 'tool provider' : `tool provider in scope "${scopeName(scope)}"`
  throw new TypeError(`${label} must be a function or a signal of { schemas, knownNames? } (got ${describe(provider)})`)
}

/** The error for a name already taken in the same layer. */
export function duplicateError(kind: string, name: string, scope: ScopeKey | undefined): Error {
  const remedy =
    scope === undefined
      ? 'dispose the earlier registration first, or register it through a scope to shadow it there'
      : 'dispose the earlier registration first, or register it in a nested scope to shadow it'
  return new Error(`${kind} "${name}" is already registered ${layerPhrase(scope)}; ${remedy}`)
}

/** Evaluates a source: a string is itself, a signal its current value, a function its result. */
export function evaluate(source: RawSource, context: AssembleContext): unknown {
  if (typeof source === 'string') return source
  if (typeof source === 'function') return source(context)
  return source.value
}

/** Evaluates a section's or context's text; a non-string fails naming the entry. */
export function textOf(entry: OrderedEntry, context: AssembleContext): string {
  const text = evaluate(entry.source, context)
  if (typeof text === 'string') return text
  const how = isSignalLike(entry.source) ? 'signal holds' : 'provider returned'
  throw new TypeError(`${entry.label} text ${how} ${describe(text)}; it must be a string`)
}

/** Evaluates a variable; anything but a string or `undefined` fails naming it. */
export function valueOf(entry: VariableEntry, context: AssembleContext): string | undefined {
  const value = evaluate(entry.source, context)
  if (value === undefined || typeof value === 'string') return value
  const how = isSignalLike(entry.source) ? 'signal holds' : 'provider returned'
  throw new TypeError(`${entry.label} ${how} ${describe(value)}; it must be a string or undefined`)
}

/** Ascending `order`, ties by code-unit name order (`<`, never `localeCompare`). */
export function byOrderThenName(
  a: { readonly order: number; readonly name: string },
  b: { readonly order: number; readonly name: string },
): number {
  if (a.order !== b.order) return a.order < b.order ? -1 : 1
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}
