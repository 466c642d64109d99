import { batch, signal, type Signal } from '@preact/signals-core'
import { scopeLabel, type ScopeKey } from './scope-key.js'

/**
 * The scope parent relation: one link per key, held weakly, each in its own
 * signal, so a chain read inside a `computed` subscribes to exactly the links
 * it walked.
 *
 *        preset            registrations are inherited downwards
 *        ▲    ▲            (agent sees preset and global layers);
 *   agent-1  agent-2       events are accepted upwards (a preset
 *                          listener hears agent-1's events).
 */
const links = new WeakMap<ScopeKey, Signal<ScopeKey | undefined>>()
const bound = new WeakSet<ScopeKey>()
// How many keys link to each key: a key with no children cannot close a cycle,
// so the check skips the ancestor walk and building a chain downwards stays linear.
const childCounts = new WeakMap<ScopeKey, number>()

// Held weakly: a registry nobody references must not be kept alive by this module.
const watchers = new Set<WeakRef<Signal<number>>>()

/** Bumps `counter` (weakly held) in the same batch as every bind and rebind; the returned function stops that. */
export function watchParentChanges(counter: Signal<number>): () => void {
  const ref = new WeakRef(counter)
  watchers.add(ref)
  return () => void watchers.delete(ref)
}

function linkOf(key: ScopeKey): Signal<ScopeKey | undefined> {
  let link = links.get(key)
  if (link === undefined) links.set(key, (link = signal<ScopeKey | undefined>(undefined)))
  return link
}

/** The re-linking capability returned by `bindScopeParent`. */
export interface ScopeParentBinding {
  /** Re-links the bound key to `parent` (or unlinks it with `undefined`); throws on a cycle. */
  rebind(parent: ScopeKey | undefined): void
}

function assertAcyclic(key: ScopeKey, parent: ScopeKey | undefined): void {
  if (parent === undefined) return
  if (typeof parent !== 'object' || parent === null) {
    throw new TypeError(`scope "${scopeLabel(key)}" parent must be a scope key object (got ${String(parent)})`)
  }
  if (parent !== key && (childCounts.get(key) ?? 0) === 0) return
  const path: ScopeKey[] = []
  for (let at: ScopeKey | undefined = parent; at !== undefined; at = links.get(at)?.peek()) {
    path.push(at)
    if (at === key) {
      const names = [key, ...path].map((k) => `"${scopeLabel(k)}"`).join(' → ')
      throw new Error(
        `scope "${scopeLabel(key)}" cannot take parent "${scopeLabel(parent)}": the link would close a cycle (${names}); pick a parent outside the scope's own subtree`,
      )
    }
  }
}

/**
 * Links `key` to `parent`, once per key: a second bind throws "already bound"
 * (only the returned binding may re-link it). A link that would close a cycle,
 * including `key === parent`, throws with "cycle" and changes nothing.
 */
export function bindScopeParent(key: ScopeKey, parent: ScopeKey): ScopeParentBinding {
  assertBindable(key, parent)
  bound.add(key)
  setLink(key, parent)
  return {
    rebind(next) {
      assertAcyclic(key, next)
      setLink(key, next)
    },
  }
}

/** Throws exactly what `bindScopeParent(key, parent)` would throw, changing nothing. */
export function assertBindable(key: ScopeKey, parent: ScopeKey): void {
  if (typeof key !== 'object' || key === null) throw new TypeError(`scope key must be an object (got ${String(key)})`)
  if (bound.has(key)) {
    throw new Error(
      `scope "${scopeLabel(key)}" is already bound to a parent; re-link it through the binding that bindScopeParent returned`,
    )
  }
  assertAcyclic(key, parent)
}

function setLink(key: ScopeKey, parent: ScopeKey | undefined): void {
  const link = linkOf(key)
  const last = link.peek()
  if (last === parent) return
  if (last !== undefined) childCounts.set(last, childCounts.get(last)! - 1)
  if (parent !== undefined) childCounts.set(parent, (childCounts.get(parent) ?? 0) + 1)
  batch(() => {
    link.value = parent
    for (const ref of watchers) {
      const counter = ref.deref()
      if (counter === undefined) watchers.delete(ref)
      else counter.value++
    }
  })
}

/** Whether `key` was ever bound with `bindScopeParent` (not reactive). */
export function isScopeParentBound(key: ScopeKey): boolean {
  return bound.has(key)
}

/** The parent of `key`, or `undefined`; subscribes, also to a later bind. */
export function scopeParentOf(key: ScopeKey): ScopeKey | undefined {
  return linkOf(key).value
}

/** `[key, parent, grandparent, …]`, nearest first; `[]` for `undefined`. Subscribes to every link it walks. */
export function scopeChainOf(key: ScopeKey | undefined): ScopeKey[] {
  const chain: ScopeKey[] = []
  for (let at = key; at !== undefined; at = linkOf(at).value) chain.push(at)
  return chain
}

/** Whether `ancestor` is `key` or one of its ancestors; never subscribes. */
export function isScopeWithin(key: ScopeKey, ancestor: ScopeKey): boolean {
  for (let at: ScopeKey | undefined = key; at !== undefined; at = links.get(at)?.peek()) {
    if (at === ancestor) return true
  }
  return false
}
