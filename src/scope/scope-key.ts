/** An opaque scope identity compared by reference, typically the live agent object; read only to label errors. */
export type ScopeKey = object

declare const scopedBrand: unique symbol

/** Compile-time brand of a routing-only event receiver: an event declared `this: Scoped<T>` needs a `scopeTarget` carrier. */
export type Scoped<T> = T & {
  /** Compile-time only; never present at run time. */
  readonly [scopedBrand]: true
}

/** The context property that carries a scope tag; inherited through `extend` and plugins. */
export const SCOPE_TAG: unique symbol = Symbol.for('promptloom.scope')

/** The key of the innermost `createScope` that `ctx` derives from, or `undefined` for an unscoped context. */
export function scopeOf(ctx: object): ScopeKey | undefined {
  return (ctx as { readonly [SCOPE_TAG]?: ScopeKey })[SCOPE_TAG]
}

/** Whether `value` is an object or a function: what can be a scope key (`ScopeKey = object`). Never reads it. */
export function isObjectLike(value: unknown): value is ScopeKey {
  return typeof value === 'function' || (typeof value === 'object' && value !== null)
}

/** Throws a `TypeError` (`${what} must be a scope key object (got …)`, `what` read only then) unless `value` can be one. */
export function assertScopeKey(value: unknown, what: string | (() => string)): asserts value is ScopeKey {
  if (isObjectLike(value)) return
  throw new TypeError(`${typeof what === 'string' ? what : what()} must be a scope key object (got ${describeValue(value)})`)
}

/** A short description of a wrong value: `string "x"`, `number NaN`, `an object`, `null`, …; never reads an object. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'function') return 'a function'
  return value === undefined ? 'undefined' : `${typeof value} ${String(value)}`
}

const serials = new WeakMap<ScopeKey, number>()
let nextSerial = 1

/** A label for `key` in error messages: its string `name` or `id`, else a stable serial such as `scope#3`; never throws. */
export function scopeLabel(key: ScopeKey): string {
  try {
    const { name, id } = key as { name?: unknown; id?: unknown }
    if (typeof name === 'string' && name !== '') return name
    if (typeof id === 'string' || typeof id === 'number') return String(id)
  } catch {
    // The key refuses property reads (a revoked Proxy): fall back to its serial.
  }
  let serial = serials.get(key)
  if (serial === undefined) serials.set(key, (serial = nextSerial++))
  return `scope#${serial}`
}
