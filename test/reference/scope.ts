import { Context } from 'cordis'
import type { ScopeKey } from '../../src/scope/scope-key.js'

// The oracle's own reading of the scope primitives (SPEC §1), written from
// the contract rather than imported: a context's tag is a well-known symbol
// property, the parent relation is whatever the harness says it is, and a
// carrier is a bare object holding nothing but a filter.

/** The context property holding a scope tag (SPEC §1: `Symbol.for('promptloom.scope')`). */
export const REFERENCE_SCOPE_TAG: unique symbol = Symbol.for('promptloom.scope') as never

/** How the oracle learns a scope's parent: the harness passes its own view of the links. */
export type ParentOf = (key: ScopeKey) => ScopeKey | undefined

/** The tag of `ctx` (inherited through `extend`), or `undefined` for an unscoped context. */
export function tagOf(ctx: object): ScopeKey | undefined {
  return (ctx as { [REFERENCE_SCOPE_TAG]?: ScopeKey })[REFERENCE_SCOPE_TAG]
}

/** `[key, parent, grandparent, …]`, nearest first; `[]` without a key. Throws on a cycle. */
export function chainFrom(key: ScopeKey | undefined, parentOf: ParentOf): ScopeKey[] {
  const chain: ScopeKey[] = []
  const seen = new Set<ScopeKey>()
  for (let at = key; at !== undefined; at = parentOf(at)) {
    if (seen.has(at)) throw new Error('referencePrompt: the parentOf links form a cycle')
    seen.add(at)
    chain.push(at)
  }
  return chain
}

type Filter = (ctx: Context) => boolean

/**
 * A routing-only dispatch receiver: a frozen object with no prototype whose
 * only property is a `Context.filter`. That filter asks `base`'s own filter
 * first (with `base` as `this`, as a Cordis service's filter expects), then
 * admits an untagged listener always and a tagged one only when its tag is on
 * `key`'s chain (listeners of ancestors hear a descendant's events).
 */
export function referenceCarrier(base: object, key: ScopeKey | undefined, parentOf: ParentOf): object {
  const own = (base as { [Context.filter]?: Filter })[Context.filter]
  const filter = (ctx: Context): boolean => {
    if (own !== undefined && !own.call(base, ctx)) return false
    const tag = tagOf(ctx)
    return tag === undefined || chainFrom(key, parentOf).includes(tag)
  }
  return Object.freeze(Object.create(null, { [Context.filter]: { value: filter } }))
}

const serials = new WeakMap<ScopeKey, number>()
let nextSerial = 1

/**
 * How errors name a scope: its non-empty string `name`, else its string or
 * number `id`, else a serial `scope#N`. A key whose property reads throw is
 * labelled by serial (keys are opaque; only an error label may peek).
 */
export function scopeName(key: ScopeKey): string {
  try {
    const { name, id } = key as { name?: unknown; id?: unknown }
    if (typeof name === 'string' && name !== '') return name
    if (typeof id === 'string' || typeof id === 'number') return String(id)
  } catch {
    // A hostile key (a Proxy that throws on reads): fall through to a serial.
  }
  let serial = serials.get(key)
  if (serial === undefined) serials.set(key, (serial = nextSerial++))
  return `scope#${serial}`
}

/** `the global view` or `scope "agent"`: how a view is named in errors. */
export function viewLabel(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'the global view' : `scope "${scopeName(scope)}"`
}
