import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { ScopedLayers } from '../scope/scoped-layers.js'
import { scopeParentOf } from '../scope/parent-chain.js'
import type { ScopeKey, Scoped } from '../scope/scope-key.js'
import { scopeTarget } from '../scope/carrier.js'
import { structureRevision, type Revision } from '../scope/revision.js'
import { layerRevisions, type ContextEntry, type PromptLayer, type ToolEntry, type VariableEntry } from './entries.js'
import { mergedPlan, mergeSorted, patchedPlan, sectionPlanOf, type MergedPlan, type SectionPlan } from './section-plan.js'
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

/**
 * A fact's last derived value, with the revisions it was derived at (`-1`:
 * never derived): the structure revision, which every fact reads, and that of
 * the entry kind it reads (none for `layers`).
 */
class FactMemo {
  structure = -1
  kind = -1
  value: unknown = undefined
  readonly revision: Revision | undefined

  constructor(revision: Revision | undefined) {
    this.revision = revision
  }
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
  /** Each fact's last value from `derive`, answered again while neither revision it reads moved. */
  readonly #memos: Readonly<Record<ViewFact, FactMemo>> = {
    layers: new FactMemo(undefined),
    sections: new FactMemo(layerRevisions.sections),
    contexts: new FactMemo(layerRevisions.contexts),
    variables: new FactMemo(layerRevisions.variables),
    tools: new FactMemo(layerRevisions.tools),
    suppressed: new FactMemo(layerRevisions.suppressors),
  }

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
    // The last merge, so that the next one (after a registration or disposal
    // here, under an unchanged parent) patches it instead of merging again.
    let merged: MergedPlan | undefined
    this.sections = computed(() => {
      const base = this.parent.value?.sections.value ?? NO_SECTIONS
      const layer = this.own.value
      if (layer === undefined || layer.sections.size === 0) {
        merged = undefined
        return base
      }
      stats.structureRecomputes++
      const own = [...layer.sections.values()]
      merged = (merged?.base === base ? patchedPlan(merged, own) : undefined) ?? mergedPlan(base, own)
      return merged.plan
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
   * preact subscribe and notify along the chain recursively, and keep it alive).
   *
   * Before any of that, the fact's memo: a view's facts read nothing but
   * parent links, scope layers and the layers' entry tables, and every write
   * to those bumps the structure revision or its kind's (revision.ts). While
   * neither moved, no source of this fact's computed changed, so preact would
   * return the very value it returned last time: the memo returns it without
   * the chain walk and the source checks a write elsewhere (a signal in a
   * section text, another kind of entry, another agent) would cost. A memo
   * answer leaves the computeds as they were: a caller that goes on to read
   * `view[fact].value` itself (inside a computed of its own) calls `refresh`.
   */
  derive<K extends ViewFact>(fact: K): ViewFactValue<K> {
    return this.#derive(fact, true)
  }

  /**
   * Like `derive`, but always brings the chain's computeds of `fact` up to
   * date in this global version, farthest first: after it, reading
   * `view[fact].value` (or an ancestor's) directly returns at once, whatever
   * the depth, instead of refreshing the chain recursively.
   */
  refresh<K extends ViewFact>(fact: K): ViewFactValue<K> {
    return this.#derive(fact, false)
  }

  #derive<K extends ViewFact>(fact: K, memoized: boolean): ViewFactValue<K> {
    const host = this.#host
    // A view of an abandoned generation (or any view after a cut-short
    // derivation) hands over to the current view of its scope.
    if (host.deriving || this.generation !== host.generation) return host.current(this.key).#derive(fact, memoized)
    const memo = this.#memos[fact]
    const structure = structureRevision.count
    const kind = memo.revision?.count ?? 0
    if (memoized && memo.structure === structure && memo.kind === kind) return memo.value as ViewFactValue<K>
    host.deriving = true
    deriveView = this
    deriveFact = fact
    const value = untracked(refreshChain) as ViewFactValue<K>
    host.deriving = false
    memo.structure = structure
    memo.kind = kind
    memo.value = value
    return value
  }
}

// The arguments of `refreshChain`, set right before `untracked` calls it (a
// module function, not a closure per call: a steady step derives about ten
// facts). It reads them before anything else runs, so nesting is harmless.
let deriveView: ScopeView | undefined
let deriveFact: ViewFact = 'layers'
// The ancestors being refreshed (nearest first), reused across calls so a
// steady derive allocates nothing; cleared after each use so it keeps no view
// alive, and dropped after a deep chain so it keeps no long array either. A
// nested refresh finds it in use and takes its own.
const SPARE_CHAIN_MAX = 64
let spareChain: (ScopeView | undefined)[] = []
let spareChainInUse = false

/** `ScopeView.derive`'s refresh of `deriveView`'s chain, farthest ancestor first, then its `deriveFact`. */
function refreshChain(): unknown {
  const view = deriveView!
  const fact = deriveFact
  deriveView = undefined
  const spare = !spareChainInUse
  const chain = spare ? spareChain : []
  spareChainInUse = true
  let length = 0
  try {
    for (let at = view.parent.value; at !== undefined; at = at.parent.value) chain[length++] = at
    for (let i = length - 1; i >= 0; i--) chain[i]![fact].value
  } finally {
    if (spare) {
      if (length > SPARE_CHAIN_MAX) spareChain = []
      else for (let i = 0; i < length; i++) chain[i] = undefined
      spareChainInUse = false
    }
  }
  return view[fact].value
}
