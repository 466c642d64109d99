import { batch, untracked, type Signal } from '@preact/signals-core'
import { cellOf } from '../signals/signal-table.js'
import { Context } from 'cordis'
import { assertScopeKey, isObjectLike, scopeLabel, scopeOf, type ScopeKey, type Scoped } from './scope-key.js'

/**
 * The scope parent relation: one link per key, held weakly, each in its own signal, so a chain read inside a
 * `computed` subscribes to exactly the links it walked. `scopeTarget` routes events up the same chain.
 *
 *        preset            registrations are inherited downwards
 *        ▲    ▲            (agent sees preset and global layers);
 *   agent-1  agent-2       events are accepted upwards (a preset
 *                          listener hears agent-1's events).
 */
const links = new WeakMap<ScopeKey, Signal<ScopeKey | undefined>>()
const bound = new WeakSet<ScopeKey>()
// Children per key: a childless key cannot close a cycle, so its bind skips the ancestor walk and building a chain stays linear.
const childCounts = new WeakMap<ScopeKey, number>()

// Held weakly: a registry nobody references must not be kept alive by this module.
const watchers = new Set<WeakRef<Signal<number>>>()

/** Bumps `counter` (weakly held) in the same batch as every bind and rebind; the returned function stops that. */
export function watchParentChanges(counter: Signal<number>): () => void {
  const ref = new WeakRef(counter)
  watchers.add(ref)
  return () => void watchers.delete(ref)
}

/** The re-linking capability returned by `bindScopeParent`. */
export interface ScopeParentBinding {
  /** Re-links the bound key to `parent` (or unlinks it with `undefined`); throws on a cycle. */
  rebind(parent: ScopeKey | undefined): void
}

function assertAcyclic(key: ScopeKey, parent: ScopeKey): void {
  assertScopeKey(parent, () => `scope "${scopeLabel(key)}" parent`)
  if ((parent !== key && (childCounts.get(key) ?? 0) === 0) || !isScopeWithin(parent, key)) return
  const path = untracked(() => scopeChainOf(parent))
  const names = [key, ...path.slice(0, path.indexOf(key) + 1)].map((k) => `"${scopeLabel(k)}"`).join(' → ')
  throw new Error(
    `scope "${scopeLabel(key)}" cannot take parent "${scopeLabel(parent)}": the link would close a cycle (${names}); pick a parent outside the scope's own subtree`,
  )
}

/**
 * Links `key` to `parent`, once per key: a second bind throws "already bound" (only the returned binding may
 * re-link it). A link that would close a cycle, including `key === parent`, throws with "cycle" and changes nothing.
 */
export function bindScopeParent(key: ScopeKey, parent: ScopeKey): ScopeParentBinding {
  assertBindable(key, parent)
  bound.add(key)
  setLink(key, parent)
  return {
    rebind(next) {
      if (next !== undefined) assertAcyclic(key, next)
      setLink(key, next)
    },
  }
}

/** Throws exactly what `bindScopeParent(key, parent)` would throw, changing nothing. */
export function assertBindable(key: ScopeKey, parent: ScopeKey): void {
  assertScopeKey(key, 'bindScopeParent() key')
  if (bound.has(key)) {
    throw new Error(
      `scope "${scopeLabel(key)}" is already bound to a parent; re-link it through the binding that bindScopeParent returned`,
    )
  }
  assertAcyclic(key, parent)
}

function setLink(key: ScopeKey, parent: ScopeKey | undefined): void {
  const link = cellOf(links, key)
  const last = link.peek()
  if (last === parent) return
  if (last !== undefined) childCounts.set(last, childCounts.get(last)! - 1)
  if (parent !== undefined) childCounts.set(parent, (childCounts.get(parent) ?? 0) + 1)
  batch(() => {
    link.value = parent
    for (const ref of watchers) {
      const counter = ref.deref()
      if (counter === undefined) watchers.delete(ref)
      else counter.value = counter.peek() + 1
    }
  })
}

/** The parent of `key`, or `undefined`; subscribes, also to a later bind. */
export function scopeParentOf(key: ScopeKey): ScopeKey | undefined {
  assertScopeKey(key, 'scopeParentOf() key')
  return cellOf(links, key).value
}

/** `[key, parent, grandparent, …]`, nearest first; `[]` for `undefined`. Subscribes to every link it walks. */
export function scopeChainOf(key: ScopeKey | undefined): ScopeKey[] {
  if (key !== undefined) assertScopeKey(key, 'scopeChainOf() key')
  const chain: ScopeKey[] = []
  for (let at = key; at !== undefined; at = cellOf(links, at).value) chain.push(at)
  return chain
}

/** Whether `ancestor` is `key` or one of its ancestors; never subscribes. */
export function isScopeWithin(key: ScopeKey, ancestor: ScopeKey): boolean {
  for (let at: ScopeKey | undefined = key; at !== undefined; at = links.get(at)?.peek()) {
    if (at === ancestor) return true
  }
  return false
}

const CARRIER: unique symbol = Symbol.for('promptloom.carrier')

type Filter = (this: unknown, ctx: Context) => boolean

/**
 * A routing-only receiver (frozen, null-prototype) to pass first to `ctx.emit`/`ctx.waterfall`/…: after `base`'s own
 * filter, it admits unscoped listeners and those tagged with `key` or an ancestor (events flow up the chain, never
 * down or across); `{ global: true }` listeners bypass every filter.
 */
export function scopeTarget<T extends object>(base: T, key: ScopeKey | undefined): Scoped<T> {
  const baseFilter = (base as { [Context.filter]?: Filter })[Context.filter]
  const filter: Filter = (ctx) => {
    if (baseFilter !== undefined && !baseFilter.call(base, ctx)) return false
    const tag = scopeOf(ctx)
    return tag === undefined || (key !== undefined && isScopeWithin(key, tag))
  }
  return Object.freeze(Object.create(null, { [Context.filter]: { value: filter }, [CARRIER]: { value: key } }) as Scoped<T>)
}

/** Whether `value` is a carrier made by `scopeTarget`. */
export function isScopeCarrier(value: unknown): value is Scoped<object> {
  return isObjectLike(value) && Object.hasOwn(value, CARRIER)
}

/** The scope key a carrier routes to; `undefined` for an unscoped carrier or a non-carrier. */
export function carrierKeyOf(value: unknown): ScopeKey | undefined {
  return isScopeCarrier(value) ? (value as unknown as Readonly<Record<typeof CARRIER, ScopeKey | undefined>>)[CARRIER] : undefined
}
