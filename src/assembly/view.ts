import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { NamedEntries } from '../scope/layer-entries.js'
import { scopeParentOf, scopeTarget } from '../scope/parent-chain.js'
import type { ScopeKey, Scoped } from '../scope/scope-key.js'
import { layerOf, SourceKind, type ContextEntry, type LayerRef, type PromptLayer } from './entries.js'
import type { SectionEntry, ToolEntry, VariableEntry } from './entries.js'
import type { NamedSource, SectionSource, SourceTable } from './provenance.js'
import type { ViewCache } from './view-cache.js'

/** The effective sections of a scope, sorted by order then code-unit name. */
export interface SectionPlan {
  readonly entries: readonly SectionEntry[]
  readonly complete: readonly SectionEntry[]
  readonly dynamic: readonly number[]
  readonly sources: SourceTable<SectionSource>
}

/** The effective runtime contexts of a scope, sorted by order then code-unit name. */
export interface ContextPlan {
  readonly entries: readonly ContextEntry[]
  /** The `required: true` subset, in the same order. */
  readonly required: readonly ContextEntry[]
  readonly byName: ReadonlyMap<string, ContextEntry>
  readonly sources: SourceTable<NamedSource>
}

/** The effective variables of a scope, in merge order. */
export interface VariablePlan {
  readonly entries: readonly VariableEntry[]
  readonly byName: ReadonlyMap<string, VariableEntry>
  /** Every static value by name, in plan order (`undefined` for a dynamic entry). */
  readonly values: Readonly<Record<string, string | undefined>>
  readonly dynamic: readonly number[]
  readonly sources: SourceTable<NamedSource>
}

interface ViewFacts {
  readonly layers: readonly PromptLayer[]
  readonly sections: SectionPlan
  readonly contexts: ContextPlan
  readonly variables: VariablePlan
  readonly tools: readonly ToolEntry[]
  readonly suppressed: boolean
}

export function sameItems<E>(a: readonly E[], b: readonly E[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

/** The positions of the entries whose value is a signal or a function (read on every assembly). */
function dynamicOf(entries: readonly (SectionEntry | VariableEntry)[]): number[] {
  const dynamic: number[] = []
  for (let i = 0; i < entries.length; i++) if (entries[i]!.kind !== SourceKind.Static) dynamic.push(i)
  return dynamic
}

function sectionPlanOf(entries: readonly SectionEntry[]): SectionPlan {
  const sources = { list: entries.map((entry) => entry.source) }
  return { entries, complete: entries.filter((entry) => entry.complete), dynamic: dynamicOf(entries), sources }
}

type Ordered = { readonly order: number; readonly name: string }

/** The plans' one sort order: by order, then by code-unit name (names are unique within a plan, so it is total). */
function byOrderThenName(a: Ordered, b: Ordered): number {
  return a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/**
 * The parent's sorted entries minus the names `own` shadows, interleaved with `own` sorted in place.
 * Linear in the parent plan, so a scope under a large global layer pays for a copy, not for a sort.
 */
function mergeSorted<E extends Ordered>(base: readonly E[], own: E[]): E[] {
  own.sort(byOrderThenName)
  const shadowed = new Set(own.map((entry) => entry.name))
  const out = new Array<E>(base.length + own.length)
  let n = 0
  let j = 0
  for (const entry of base) {
    if (shadowed.has(entry.name)) continue
    while (j < own.length && byOrderThenName(own[j]!, entry) < 0) out[n++] = own[j++]!
    out[n++] = entry
  }
  while (j < own.length) out[n++] = own[j++]!
  out.length = n
  return out
}

function contextPlanOf(entries: readonly ContextEntry[], base: ContextPlan): ContextPlan {
  const byName = new Map(entries.map((entry) => [entry.name, entry]))
  const required = entries.filter((entry) => entry.required)
  const sources = { list: entries.map((entry) => entry.source) }
  // Own contexts that leave the required ones as they were share the parent's list (nothing per agent).
  return { entries, required: sameItems(required, base.required) ? base.required : required, byName, sources }
}

function mergeVariables(base: VariablePlan, layer: PromptLayer): VariablePlan {
  // A shadowing entry takes the shadowed one's position; a new name goes last.
  const entries = base.entries.slice()
  const byName = new Map(base.byName)
  layer.variables.forEach((entry, name) => {
    const hidden = byName.get(name)
    if (hidden === undefined) entries.push(entry)
    else entries[entries.indexOf(hidden)] = entry
    byName.set(name, entry)
  })
  return variablePlanOf(entries, byName)
}

function variablePlanOf(entries: readonly VariableEntry[], byName: ReadonlyMap<string, VariableEntry>): VariablePlan {
  const values = Object.fromEntries(entries.map((e) => [e.name, e.kind === SourceKind.Static ? e.value : undefined]))
  return { entries, byName, values, dynamic: dynamicOf(entries), sources: { list: entries.map((entry) => entry.source) } }
}

const NO_SECTIONS: SectionPlan = sectionPlanOf([])
const NO_CONTEXTS: ContextPlan = { entries: [], required: [], byName: new Map(), sources: { list: [] } }
const NO_VARIABLES: VariablePlan = variablePlanOf([], new Map())

/**
 * The memoized graph of one scope (or of the global view): each fact is a `computed` built on the
 * parent view's, so siblings share their parent's work, a change re-derives only what depends on it,
 * and a scope without entries of a kind shares its parent's plan object.
 *
 *     global view      layer ─┐
 *          ▲                  ▼
 *     preset view  = parent ⊕ own layer       (sections, contexts, variables,
 *          ▲                                    tools, suppressed, layers)
 *     agent view   = parent ⊕ own layer
 *
 * The parent is read through the scope's parent link, so a rebind re-derives exactly the views below
 * it; unread computeds subscribe to nothing, so a view is garbage with its scope key. Read a fact
 * through `derive`, never `.value`.
 */
export class ScopeView {
  readonly generation: number
  readonly carrier: Scoped<object>
  // The computeds below read `key` and `#cache` when first evaluated, after the constructor set them.
  /** The global view for a root scope; `undefined` for the global view itself. */
  readonly parent: ReadonlySignal<ScopeView | undefined> = computed(() => {
    const { key } = this
    if (key === undefined) return undefined
    const parent = this.#cache.viewOf(scopeParentOf(key))
    parent.parented = true
    return parent
  })
  /** Set once a view below derives from this one (its release then restarts the cache: see `ViewCache.release`). */
  parented = false
  readonly own = computed(() => (this.key === undefined ? this.#cache.store.global : this.#cache.store.peek(this.key)))
  /** Existing layers visible here: global first, then the chain farthest → nearest. */
  readonly layers: ReadonlySignal<ViewFacts['layers']> = computed(() => {
    const base = this.parent.value?.layers.value ?? []
    const own = this.own.value
    return own === undefined ? base : [...base, own]
  })
  readonly sections = this.#inherit('sections', NO_SECTIONS, (base, layer) =>
    sectionPlanOf(mergeSorted(base.entries, [...layer.sections.values()])))
  readonly contexts = this.#inherit('contexts', NO_CONTEXTS, (base, layer) =>
    contextPlanOf(mergeSorted(base.entries, [...layer.contexts.values()]), base))
  readonly variables = this.#inherit('variables', NO_VARIABLES, mergeVariables)
  readonly tools = this.#inherit('tools', [], (base, layer) => [...base, ...layer.tools.values()])
  readonly suppressed: ReadonlySignal<boolean> = computed(() => {
    const layer = this.own.value
    return (layer !== undefined && layer.suppressors.size > 0) || (this.parent.value?.suppressed.value ?? false)
  })

  readonly #cache: ViewCache

  constructor(readonly key: ScopeKey | undefined, cache: ViewCache) {
    this.generation = cache.generation
    this.#cache = cache
    this.carrier = scopeTarget(cache.carrierBase, key)
  }

  /** The parent's `kind` plan, or `merge` of it and the own layer when that layer has entries of the kind. */
  #inherit<K extends 'sections' | 'contexts' | 'variables' | 'tools'>(
    kind: K,
    empty: ViewFacts[K],
    merge: (base: ViewFacts[K], layer: PromptLayer) => ViewFacts[K],
  ): ReadonlySignal<ViewFacts[K]> {
    return computed(() => {
      const parent = this.parent.value
      const base = parent === undefined ? empty : (parent[kind] as ReadonlySignal<ViewFacts[K]>).value
      const layer = this.own.value
      if (layer === undefined || layer[kind].size === 0) return base
      this.#cache.stats.structureRecomputes++
      return merge(base, layer)
    })
  }

  /**
   * The current value of `fact`, untracked (an effect subscribed to a view would be notified along the
   * chain recursively, and keep it alive). preact refreshes a stale computed's sources recursively, so
   * the chain is refreshed farthest ancestor first, in a loop, each refresh finding its parent fresh:
   *
   *     global ─▶ root ─▶ … ─▶ parent ─▶ this      refreshed in this order,
   *     (1)       (2)          (N)       read      each one frame deep
   */
  derive<K extends keyof ViewFacts>(fact: K): ViewFacts[K] {
    const cache = this.#cache
    // A view of an abandoned generation (or any view after a cut-short derivation) hands over to the current one.
    if (cache.deriving || this.generation !== cache.generation) return cache.view(this.key).derive(fact)
    cache.deriving = true
    const value = untracked(() => {
      const ancestors: ScopeView[] = []
      for (let at = this.parent.value; at !== undefined; at = at.parent.value) ancestors.push(at)
      for (let i = ancestors.length - 1; i >= 0; i--) ancestors[i]![fact].value
      return this[fact].value as ViewFacts[K]
    })
    cache.deriving = false
    return value
  }
}

/** One effective named entry of a view, with where it came from. */
export interface InspectedEntry {
  readonly name: string
  /** The layer that supplies it: `'global'` or the supplying scope key. */
  readonly layer: LayerRef
  /** The layers whose same-named entries it hides, farthest first. */
  readonly shadows: readonly LayerRef[]
  /** `true` on a section registered with `required: true` (no assemble listener can remove or change it). */
  readonly required?: true
}

/** One contributing tool provider of a view. */
export interface InspectedTools {
  /** The layer the provider is registered in: `'global'` or its scope key. */
  readonly layer: LayerRef
  /** The provider's position among its layer's providers. */
  readonly index: number
}

/** The effective entries of one view (see `SystemPrompt.inspect`). */
export interface PromptInspection {
  /** Sections in assembly order (order, then code-unit name). */
  readonly sections: readonly InspectedEntry[]
  /** Runtime contexts in assembly order, suppressed or not. */
  readonly contexts: readonly InspectedEntry[]
  /** Variables in merge order. */
  readonly variables: readonly InspectedEntry[]
  /** Contributing tool providers, farthest layer first, in registration order within a layer. */
  readonly tools: readonly InspectedTools[]
}

/** The named entries of `layers` (farthest first) as `ScopedLayers.merge` merges them, each with the layers it shadows. */
function shadowsIn<V extends { readonly scope: ScopeKey | undefined }>(
  layers: readonly PromptLayer[],
  pick: (layer: PromptLayer) => NamedEntries<V>,
): Map<string, InspectedEntry> {
  const out = new Map<string, InspectedEntry>()
  for (const layer of layers) {
    pick(layer).forEach((value, name) => {
      const hidden = out.get(name)
      out.set(name, { name, layer: layerOf(value.scope), shadows: hidden === undefined ? [] : [...hidden.shadows, hidden.layer] })
    })
  }
  return out
}

/** Builds the inspection of `view` from its current layers; reads without subscribing. */
export function inspectView(view: ScopeView): PromptInspection {
  return untracked(() => {
    const layers = view.derive('layers')
    const sections = shadowsIn(layers, (layer) => layer.sections)
    const contexts = shadowsIn(layers, (layer) => layer.contexts)
    const variables = shadowsIn(layers, (layer) => layer.variables)
    const tools: InspectedTools[] = []
    for (const layer of layers) layer.tools.forEach((entry, index) => tools.push({ layer: layerOf(entry.scope), index }))
    return {
      sections: view.derive('sections').entries.map((entry) => {
        const inspected = sections.get(entry.name)!
        return entry.required ? { ...inspected, required: true as const } : inspected
      }),
      contexts: view.derive('contexts').entries.map((entry) => contexts.get(entry.name)!),
      variables: [...variables.values()],
      tools,
    }
  })
}
