import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import { scopeParentOf, scopeTarget } from '../scope/parent-chain.js'
import type { ScopeKey, Scoped } from '../scope/scope-key.js'
import { SourceKind, type ContextEntry, type PromptLayer, type SectionEntry, type ToolEntry, type VariableEntry } from './entries.js'
import type { NamedSource, SectionSource, SourceTable } from './provenance.js'
import type { ViewCache } from './view-cache.js'

/** The effective sections of a scope, sorted by order then code-unit name. */
export interface SectionPlan {
  readonly entries: readonly SectionEntry[]
  readonly complete: readonly SectionEntry[]
  /** The positions of the entries whose text is a signal or a function (read on every assembly). */
  readonly dynamic: readonly number[]
  /** Each static entry's text by position (`''` at a dynamic position). */
  readonly texts: readonly string[]
  readonly sources: SourceTable<SectionSource>
}

/** The effective runtime contexts of a scope, sorted by order then code-unit name. */
export interface ContextPlan {
  readonly entries: readonly ContextEntry[]
  /** The `required: true` subset, in the same order. */
  readonly required: readonly ContextEntry[]
  readonly byName: ReadonlyMap<string, ContextEntry>
  readonly requiredNames: ReadonlySet<string>
  readonly sources: SourceTable<NamedSource>
}

/** The effective variables of a scope, in merge order. */
export interface VariablePlan {
  readonly entries: readonly VariableEntry[]
  readonly byName: ReadonlyMap<string, VariableEntry>
  /** Every static value by name, in plan order (`undefined` for a dynamic entry). */
  readonly values: Readonly<Record<string, string | undefined>>
  /** The positions of the entries whose value is a signal or a function. */
  readonly dynamic: readonly number[]
  readonly sources: SourceTable<NamedSource>
}

type ViewFact = 'layers' | 'sections' | 'contexts' | 'variables' | 'tools' | 'suppressed'

type MergedFact = 'sections' | 'contexts' | 'variables' | 'tools'

type ViewFactValue<K extends ViewFact> = ScopeView[K] extends ReadonlySignal<infer T> ? T : never

export function sameItems<E>(a: readonly E[], b: readonly E[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

function sectionPlanOf(entries: readonly SectionEntry[]): SectionPlan {
  const dynamic: number[] = []
  const texts = entries.map((entry, i) => {
    if (entry.kind === SourceKind.Static) return entry.value!
    dynamic.push(i)
    return ''
  })
  const sources = { list: entries.map((entry) => entry.source) }
  return { entries, complete: entries.filter((entry) => entry.complete), dynamic, texts, sources }
}

type Ordered = { readonly order: number; readonly name: string }

/** The plans' one sort order: by order, then by code-unit name (names are unique within a plan, so it is total). */
export function byOrderThenName(a: Ordered, b: Ordered): number {
  return a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/**
 * The parent's sorted entries minus the names `own` shadows, interleaved with `own` sorted in place.
 * Linear in the parent plan, so a scope under a large global layer pays for a copy, not for a sort.
 */
function mergeSorted<E extends Ordered>(base: readonly E[], own: E[]): E[] {
  own.sort(byOrderThenName)
  const shadowed = new Set(own.map((entry) => entry.name))
  const out: E[] = []
  let j = 0
  for (const entry of base) {
    if (shadowed.has(entry.name)) continue
    while (j < own.length && byOrderThenName(own[j]!, entry) < 0) out.push(own[j++]!)
    out.push(entry)
  }
  while (j < own.length) out.push(own[j++]!)
  return out
}

function contextPlanOf(entries: readonly ContextEntry[], base: ContextPlan): ContextPlan {
  const byName = new Map(entries.map((entry) => [entry.name, entry]))
  const sources = { list: entries.map((entry) => entry.source) }
  const required = entries.filter((entry) => entry.required)
  // Own contexts that leave the required ones as they were share the parent's (nothing per agent).
  if (sameItems(required, base.required)) return { entries, required: base.required, byName, requiredNames: base.requiredNames, sources }
  return { entries, required, byName, requiredNames: new Set(required.map((entry) => entry.name)), sources }
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
  const values: Record<string, string | undefined> = {}
  const dynamic: number[] = []
  entries.forEach((entry, i) => {
    values[entry.name] = entry.kind === SourceKind.Static ? entry.value : undefined
    if (entry.kind !== SourceKind.Static) dynamic.push(i)
  })
  return { entries, byName, values, dynamic, sources: { list: entries.map((entry) => entry.source) } }
}

const NO_SECTIONS: SectionPlan = sectionPlanOf([])
const NO_CONTEXTS: ContextPlan = { entries: [], required: [], byName: new Map(), requiredNames: new Set(), sources: { list: [] } }
const NO_VARIABLES: VariablePlan = variablePlanOf([], new Map())

/**
 * The memoized graph of one scope (or of the global view). Each derived fact is its own `computed`,
 * built on the parent view's, so siblings share their parent's work and a change re-derives only
 * what depends on it. A scope without entries of a kind shares its parent's plan object for it.
 *
 *     global view      layer ─┐
 *          ▲                  ▼
 *     preset view  = parent ⊕ own layer       (sections, contexts, variables,
 *          ▲                                    tools, suppressed, layers)
 *     agent view   = parent ⊕ own layer
 *
 * The parent is read through the scope's parent link, so a rebind re-derives exactly the views below
 * it. Unread computeds subscribe to nothing, so a view is garbage with its scope key and its
 * descendants' views. Read a fact through `derive`, never `.value` directly.
 */
export class ScopeView {
  readonly key: ScopeKey | undefined
  readonly generation: number
  readonly carrier: Scoped<object>
  /** The global view for a root scope; `undefined` for the global view itself. */
  readonly parent: ReadonlySignal<ScopeView | undefined>
  readonly own: ReadonlySignal<PromptLayer | undefined>
  /** Existing layers visible here: global first, then the chain farthest → nearest. */
  readonly layers: ReadonlySignal<readonly PromptLayer[]>
  readonly sections: ReadonlySignal<SectionPlan>
  readonly contexts: ReadonlySignal<ContextPlan>
  readonly variables: ReadonlySignal<VariablePlan>
  readonly tools: ReadonlySignal<readonly ToolEntry[]>
  readonly suppressed: ReadonlySignal<boolean>

  readonly #cache: ViewCache

  constructor(key: ScopeKey | undefined, cache: ViewCache) {
    this.key = key
    this.generation = cache.generation
    this.#cache = cache
    const store = cache.store
    this.carrier = scopeTarget(cache.carrierBase, key)
    this.parent = computed(() => (key === undefined ? undefined : cache.viewOf(scopeParentOf(key))))
    this.own = computed(() => (key === undefined ? store.global : store.peek(key)))
    this.layers = computed(() => {
      const base = this.parent.value?.layers.value ?? []
      const own = this.own.value
      return own === undefined ? base : [...base, own]
    })
    this.sections = this.#inherit('sections', NO_SECTIONS, (base, layer) => sectionPlanOf(mergeSorted(base.entries, [...layer.sections.values()])))
    this.contexts = this.#inherit('contexts', NO_CONTEXTS, (base, layer) => contextPlanOf(mergeSorted(base.entries, [...layer.contexts.values()]), base))
    this.variables = this.#inherit('variables', NO_VARIABLES, mergeVariables)
    this.tools = this.#inherit('tools', [], (base, layer) => [...base, ...layer.tools.values()])
    this.suppressed = computed(() => {
      const layer = this.own.value
      return (layer !== undefined && layer.suppressors.size > 0) || (this.parent.value?.suppressed.value ?? false)
    })
  }

  /** The parent's `kind` plan, or `merge` of it and the own layer when that layer has entries of the kind. */
  #inherit<K extends MergedFact>(kind: K, empty: ViewFactValue<K>, merge: (base: ViewFactValue<K>, layer: PromptLayer) => ViewFactValue<K>) {
    const stats = this.#cache.stats
    return computed(() => {
      const parent = this.parent.value
      const base = parent === undefined ? empty : (parent[kind] as ReadonlySignal<ViewFactValue<K>>).value
      const layer = this.own.value
      if (layer === undefined || layer[kind].size === 0) return base
      stats.structureRecomputes++
      return merge(base, layer)
    })
  }

  /**
   * The current value of `fact`, read without subscribing the caller. preact refreshes a stale
   * computed's sources recursively, so reading a view N scopes deep would nest N refreshes. Instead
   * the chain is refreshed farthest ancestor first, in a loop; each refresh finds its parent fresh:
   *
   *     global ─▶ root ─▶ … ─▶ parent ─▶ this      refreshed in this order,
   *     (1)       (2)          (N)       read      each one frame deep
   *
   * Untracked, so no caller's effect subscribes to a view (preact would then subscribe and notify
   * along the chain recursively, and keep it alive).
   */
  derive<K extends ViewFact>(fact: K): ViewFactValue<K> {
    const cache = this.#cache
    // A view of an abandoned generation (or any view after a cut-short derivation) hands over to the current one.
    if (cache.deriving || this.generation !== cache.generation) return cache.view(this.key).derive(fact)
    cache.deriving = true
    const value = untracked(() => {
      const ancestors: ScopeView[] = []
      for (let at = this.parent.value; at !== undefined; at = at.parent.value) ancestors.push(at)
      for (let i = ancestors.length - 1; i >= 0; i--) ancestors[i]![fact].value
      return this[fact].value as ViewFactValue<K>
    })
    cache.deriving = false
    return value
  }
}
