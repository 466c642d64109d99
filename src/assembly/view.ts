import { computed, type ReadonlySignal } from '@preact/signals-core'
import type { ScopedLayers } from '../scope/scoped-layers.js'
import type { ScopeKey, Scoped } from '../scope/scope-key.js'
import { scopeTarget } from '../scope/carrier.js'
import type { ContextEntry, PromptLayer, SectionEntry, ToolEntry, VariableEntry } from './entries.js'
import type { PromptStats } from './stats.js'
import { RenderMemo } from './render-memo.js'
import type { ToolSchema } from './types.js'

/** The effective sections of a scope, sorted by order then code-unit name. */
export interface SectionPlan {
  readonly entries: readonly SectionEntry[]
  /** The effective sections registered with `complete: true`. */
  readonly complete: readonly SectionEntry[]
}

/** The effective runtime contexts of a scope, sorted by order then code-unit name. */
export interface ContextPlan {
  readonly entries: readonly ContextEntry[]
  /** The `required: true` subset, in the same order. */
  readonly required: readonly ContextEntry[]
  readonly byName: ReadonlyMap<string, ContextEntry>
  /** The names of `entries` and of `required`, for the suppression and refresh checks. */
  readonly names: ReadonlySet<string>
  readonly requiredNames: ReadonlySet<string>
}

/** The effective variables of a scope, in merge order. */
export interface VariablePlan {
  readonly entries: readonly VariableEntry[]
  readonly byName: ReadonlyMap<string, VariableEntry>
}

function byOrderThenName(a: { order: number; name: string }, b: { order: number; name: string }): number {
  return a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The memoized graph of one scope (or of the global view). Each derived fact
 * is its own `computed`, so a change re-derives only what depends on it:
 *
 *            parent links ─┐   ┌─ layer slots
 *                          ▼   ▼
 *                         chain ──────────────┬──────────┬──────────┬─────────┐
 *   global + chain tables ─▶ sections    contexts   variables     tools   suppressed
 *
 * Nothing here subscribes to anything while nobody reads it (computeds
 * without an effect are pulled, not pushed), so a view is garbage as soon as
 * its scope key is.
 */
export class ScopeView {
  readonly key: ScopeKey | undefined
  /** The routing carrier for this scope's waterfalls. */
  readonly carrier: Scoped<object>
  /** Existing layers visible here: global first, then the chain farthest → nearest. */
  readonly layers: ReadonlySignal<readonly PromptLayer[]>
  readonly sections: ReadonlySignal<SectionPlan>
  readonly contexts: ReadonlySignal<ContextPlan>
  readonly variables: ReadonlySignal<VariablePlan>
  readonly tools: ReadonlySignal<readonly ToolEntry[]>
  readonly suppressed: ReadonlySignal<boolean>

  /** The last tool providers' results and the tools built from them (identity-checked). */
  toolMemo: { readonly results: readonly unknown[]; readonly tools: readonly ToolSchema[] } | undefined
  readonly sectionRenders = new RenderMemo()
  readonly contextRenders = new RenderMemo()

  constructor(key: ScopeKey | undefined, store: ScopedLayers<PromptLayer>, stats: PromptStats, carrierBase: object) {
    this.key = key
    this.carrier = scopeTarget(carrierBase, key)
    let last: readonly PromptLayer[] = []
    this.layers = computed(() => {
      const next = [store.global, ...store.chainLayers(key)]
      // Keep the array's identity when the same layers come back, so the
      // views below are not re-derived for a link change that moved nothing.
      return sameItems(last, next) ? last : (last = next)
    })
    this.sections = computed(() => {
      stats.structureRecomputes++
      const merged = new Map<string, SectionEntry>()
      for (const layer of this.layers.value) layer.sections.forEach((entry, name) => merged.set(name, entry))
      const entries = [...merged.values()].sort(byOrderThenName)
      return { entries, complete: entries.filter((entry) => entry.complete) }
    })
    this.contexts = computed(() => {
      stats.structureRecomputes++
      const byName = new Map<string, ContextEntry>()
      for (const layer of this.layers.value) layer.contexts.forEach((entry, name) => byName.set(name, entry))
      const entries = [...byName.values()].sort(byOrderThenName)
      const required = entries.filter((entry) => entry.required)
      return {
        entries,
        required,
        byName,
        names: new Set(byName.keys()),
        requiredNames: new Set(required.map((entry) => entry.name)),
      }
    })
    this.variables = computed(() => {
      stats.structureRecomputes++
      const byName = new Map<string, VariableEntry>()
      for (const layer of this.layers.value) layer.variables.forEach((entry, name) => byName.set(name, entry))
      return { entries: [...byName.values()], byName }
    })
    this.tools = computed(() => {
      stats.structureRecomputes++
      const entries: ToolEntry[] = []
      for (const layer of this.layers.value) layer.tools.forEach((entry) => entries.push(entry))
      return entries
    })
    this.suppressed = computed(() => this.layers.value.some((layer) => layer.suppressors.size > 0))
  }
}
