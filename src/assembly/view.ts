import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { ScopedLayers } from '../scope/scoped-layers.js'
import { scopeParentOf } from '../scope/parent-chain.js'
import type { ScopeKey, Scoped } from '../scope/scope-key.js'
import { scopeTarget } from '../scope/carrier.js'
import { type ContextEntry, type PromptLayer, type ToolEntry, type VariableEntry } from './entries.js'
import { mergeSorted, sectionPlanOf, type SectionPlan } from './section-plan.js'
import type { PromptStats } from './stats.js'

export type { SectionPlan } from './section-plan.js'

/** The effective runtime contexts of a scope, sorted by order then code-unit name. */
export interface ContextPlan {
  readonly entries: readonly ContextEntry[]
  /** The `required: true` subset, in the same order. */
  readonly required: readonly ContextEntry[]
  readonly byName: ReadonlyMap<string, ContextEntry>
  /** The names of `required`, for the suppression and refresh checks. */
  readonly requiredNames: ReadonlySet<string>
}

/** The effective variables of a scope, in merge order. */
export interface VariablePlan {
  readonly entries: readonly VariableEntry[]
  readonly byName: ReadonlyMap<string, VariableEntry>
}

/**
 * What a view needs from the engine that owns it. A derivation that throws
 * (a stack overflow part-way through preact's refresh can leave a computed
 * marked running, or holding the error) leaves `deriving` set; the next
 * derivation then starts a new generation of views and drops every computed
 * of the old one, so no error outlives the call that met it.
 */
export interface ViewHost {
  /** The view of `scope` in the current generation, created on demand; never starts a new generation. */
  viewOf(scope: ScopeKey | undefined): ScopeView
  /** Like `viewOf`, but first starts a new generation when the last derivation was cut short. */
  current(scope: ScopeKey | undefined): ScopeView
  /** The current generation; only the engine moves it. */
  generation: number
  /** Set while a view derives a fact; still set afterwards only when that derivation threw. */
  deriving: boolean
}

/** The derived facts of a view, each read through `ScopeView.derive`. */
export type ViewFact = 'layers' | 'sections' | 'contexts' | 'variables' | 'tools' | 'suppressed'

/** The value of one derived fact. */
export type ViewFactValue<K extends ViewFact> = ScopeView[K] extends ReadonlySignal<infer T> ? T : never

function sameEntries<E>(a: readonly E[], b: readonly E[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const NO_SECTIONS: SectionPlan = sectionPlanOf([])
const NO_CONTEXTS: ContextPlan = { entries: [], required: [], byName: new Map(), requiredNames: new Set() }
const NO_VARIABLES: VariablePlan = { entries: [], byName: new Map() }

/**
 * The memoized graph of one scope (or of the global view). Each derived fact
 * is its own `computed`, and each scope's view is built on its parent's, so
 * siblings share their parent's work and a change re-derives only what
 * depends on it:
 *
 *     global view      layer ─┐
 *          ▲                  ▼
 *     preset view  = parent ⊕ own layer       (sections, contexts, variables,
 *          ▲                                    tools, suppressed, layers)
 *     agent view   = parent ⊕ own layer
 *
 * A scope without entries of a kind shares its parent's plan object for that
 * kind: nothing is merged or sorted for it. The parent is read through the
 * scope's parent link, so a rebind re-derives exactly the views below it.
 * Nothing here subscribes to anything while nobody reads it (computeds
 * without an effect are pulled, not pushed), so a view is garbage as soon as
 * its scope key and its descendants' views are. Read a fact through `derive`,
 * never through `.value` directly: see there for why.
 */
export class ScopeView {
  readonly key: ScopeKey | undefined
  /** The engine's view generation this view belongs to (a fault while deriving starts a new one). */
  readonly generation: number
  /** The routing carrier for this scope's waterfalls. */
  readonly carrier: Scoped<object>
  /** The parent scope's view (the global view for a root scope); `undefined` for the global view. */
  readonly parent: ReadonlySignal<ScopeView | undefined>
  /** This scope's own layer, when it has one. */
  readonly own: ReadonlySignal<PromptLayer | undefined>
  /** Existing layers visible here: global first, then the chain farthest → nearest. */
  readonly layers: ReadonlySignal<readonly PromptLayer[]>
  readonly sections: ReadonlySignal<SectionPlan>
  readonly contexts: ReadonlySignal<ContextPlan>
  readonly variables: ReadonlySignal<VariablePlan>
  readonly tools: ReadonlySignal<readonly ToolEntry[]>
  readonly suppressed: ReadonlySignal<boolean>

  readonly #host: ViewHost

  constructor(key: ScopeKey | undefined, store: ScopedLayers<PromptLayer>, stats: PromptStats, carrierBase: object, host: ViewHost) {
    this.key = key
    this.generation = host.generation
    this.#host = host
    const viewOf = host.viewOf
    this.carrier = scopeTarget(carrierBase, key)
    this.parent = computed(() => (key === undefined ? undefined : viewOf(scopeParentOf(key))))
    this.own = computed(() => (key === undefined ? store.global : store.peek(key)))
    this.layers = computed(() => {
      const base = this.parent.value?.layers.value ?? []
      const own = this.own.value
      return own === undefined ? base : [...base, own]
    })
    this.sections = computed(() => {
      const base = this.parent.value?.sections.value ?? NO_SECTIONS
      const layer = this.own.value
      if (layer === undefined || layer.sections.size === 0) return base
      stats.structureRecomputes++
      return sectionPlanOf(mergeSorted(base.entries, [...layer.sections.values()]))
    })
    this.contexts = computed(() => {
      const base = this.parent.value?.contexts.value ?? NO_CONTEXTS
      const layer = this.own.value
      if (layer === undefined || layer.contexts.size === 0) return base
      stats.structureRecomputes++
      const entries = mergeSorted(base.entries, [...layer.contexts.values()])
      const byName = new Map<string, ContextEntry>()
      for (const entry of entries) byName.set(entry.name, entry)
      const required = entries.filter((entry) => entry.required)
      // A scope whose own contexts leave the required ones as they were shares its parent's (nothing per agent).
      if (sameEntries(required, base.required)) return { entries, required: base.required, byName, requiredNames: base.requiredNames }
      return { entries, required, byName, requiredNames: new Set(required.map((entry) => entry.name)) }
    })
    this.variables = computed(() => {
      const base = this.parent.value?.variables.value ?? NO_VARIABLES
      const layer = this.own.value
      if (layer === undefined || layer.variables.size === 0) return base
      stats.structureRecomputes++
      // A shadowing entry takes the shadowed one's position; a new name goes last.
      const entries = base.entries.slice()
      const byName = new Map(base.byName)
      layer.variables.forEach((entry, name) => {
        const hidden = byName.get(name)
        if (hidden === undefined) entries.push(entry)
        else entries[entries.indexOf(hidden)] = entry
        byName.set(name, entry)
      })
      return { entries, byName }
    })
    this.tools = computed(() => {
      const base = this.parent.value?.tools.value ?? []
      const layer = this.own.value
      if (layer === undefined || layer.tools.size === 0) return base
      stats.structureRecomputes++
      return [...base, ...layer.tools.values()]
    })
    this.suppressed = computed(() => {
      const layer = this.own.value
      return (layer !== undefined && layer.suppressors.size > 0) || (this.parent.value?.suppressed.value ?? false)
    })
  }

  /**
   * The current value of `fact`, read without subscribing the caller.
   *
   * Each fact's computed reads its parent's, and preact refreshes a stale
   * computed's sources recursively, so reading the nearest view of a chain N
   * scopes deep after any change would nest N refreshes. Instead the chain is
   * brought up to date farthest ancestor first, in a loop; each refresh then
   * finds its parent already fresh in this global version and returns at once,
   * whatever the depth:
   *
   *     global ─▶ root ─▶ … ─▶ parent ─▶ this      refreshed in this order,
   *     (1)       (2)          (N)       read      each one frame deep
   *
   * Untracked, so no caller's effect subscribes to a view (which would make
   * preact subscribe and notify along the chain recursively, and keep it
   * alive). After it, reading `view[fact].value` (or an ancestor's) inside a
   * computed of one's own returns at once too.
   */
  derive<K extends ViewFact>(fact: K): ViewFactValue<K> {
    const host = this.#host
    // A view of an abandoned generation (or any view after a cut-short
    // derivation) hands over to the current view of its scope.
    if (host.deriving || this.generation !== host.generation) return host.current(this.key).derive(fact)
    host.deriving = true
    const value = untracked(() => this.#refreshChain(fact))
    host.deriving = false
    return value
  }

  #refreshChain<K extends ViewFact>(fact: K): ViewFactValue<K> {
    const ancestors: ScopeView[] = []
    for (let at = this.parent.value; at !== undefined; at = at.parent.value) ancestors.push(at)
    for (let i = ancestors.length - 1; i >= 0; i--) ancestors[i]![fact].value
    return this[fact].value as ViewFactValue<K>
  }
}
