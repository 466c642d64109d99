/**
 * An opaque scope identity, compared by reference. A harness typically uses
 * the live agent object itself. promptloom never looks inside a key except to
 * label an error that is being thrown (`name` or `id`, when present).
 */
export type ScopeKey = object

declare const scopedBrand: unique symbol

/**
 * Compile-time brand for a routing-only event receiver. An event declared
 * with `this: Scoped<T>` can only be dispatched with a carrier made by
 * `scopeTarget`, so dispatching with a bare subject is a type error.
 */
export type Scoped<T> = T & {
  /** Compile-time only; never present at run time. */
  readonly [scopedBrand]: true
}

/** The context property that carries a scope tag; inherited through `extend` and plugins. */
export const SCOPE_TAG: unique symbol = Symbol.for('promptloom.scope')

/** A Cordis context, or anything else that may carry a scope tag. */
export interface ScopeTagged {
  readonly [SCOPE_TAG]?: ScopeKey
}

/**
 * The nearest scope tag of `ctx`: the key of the innermost `createScope` it
 * derives from, or `undefined` for an unscoped context.
 */
export function scopeOf(ctx: object): ScopeKey | undefined {
  return (ctx as ScopeTagged)[SCOPE_TAG]
}

const serials = new WeakMap<ScopeKey, number>()
let nextSerial = 1

/**
 * A short human label for `key` in error messages: its string `name` or
 * `id` when it has one, else a stable serial such as `scope#3`. Never
 * throws: a key whose property reads throw (a locked-down or revoked Proxy)
 * gets its serial. Call it only while building a message, because keys are
 * opaque everywhere else.
 */
export function scopeLabel(key: ScopeKey): string {
  try {
    const { name, id } = key as { name?: unknown; id?: unknown }
    if (typeof name === 'string' && name !== '') return name
    if (typeof id === 'string' || typeof id === 'number') return String(id)
  } catch {
    // The key refuses property reads: fall back to its serial.
  }
  let serial = serials.get(key)
  if (serial === undefined) serials.set(key, (serial = nextSerial++))
  return `scope#${serial}`
}
