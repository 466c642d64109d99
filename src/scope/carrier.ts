import { Context } from 'cordis'
import { isScopeWithin } from './parent-chain.js'
import { scopeOf, type ScopeKey, type Scoped } from './scope-key.js'

const CARRIER: unique symbol = Symbol.for('promptloom.carrier')

type Filter = (this: unknown, ctx: Context) => boolean

/**
 * A routing-only receiver for scope-filtered dispatch: pass it as the first
 * argument of `ctx.emit`/`ctx.waterfall`/…. Its `Context.filter` keeps
 * `base`'s own filter (called with `base` as `this`), admits unscoped
 * listeners, and admits a listener tagged with `key` or one of its ancestors:
 * events flow up the chain, never down or across. With `key === undefined`
 * only unscoped listeners hear it; `{ global: true }` listeners bypass every
 * filter (Cordis). The carrier is a frozen null-prototype object exposing
 * none of `base`'s properties: listeners read the event's arguments.
 */
export function scopeTarget<T extends object>(base: T, key: ScopeKey | undefined): Scoped<T> {
  const baseFilter = (base as { [Context.filter]?: Filter })[Context.filter]
  const filter: Filter = (ctx) => {
    if (baseFilter !== undefined && !baseFilter.call(base, ctx)) return false
    const tag = scopeOf(ctx)
    if (tag === undefined) return true
    return key !== undefined && isScopeWithin(key, tag)
  }
  const carrier = Object.create(null, {
    [Context.filter]: { value: filter },
    [CARRIER]: { value: { key } },
  }) as Scoped<T>
  return Object.freeze(carrier)
}

/** Whether `value` is a carrier made by `scopeTarget`. */
export function isScopeCarrier(value: unknown): value is Scoped<object> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && Object.hasOwn(value, CARRIER)
}

/** The scope key a carrier routes to; `undefined` for an unscoped carrier or a non-carrier. */
export function carrierKeyOf(value: unknown): ScopeKey | undefined {
  return isScopeCarrier(value) ? (value as unknown as { readonly [CARRIER]: { key: ScopeKey | undefined } })[CARRIER].key : undefined
}
