import type { ScopedLayers } from '../scope/scoped-layers.js'
import type { ScopeKey } from '../scope/scope-key.js'
import type { PromptLayer } from './entries.js'
import { describeValue } from './errors.js'
import { RenderSlots } from './render-slots.js'
import type { PromptStats } from './stats.js'
import { ScopeView } from './view.js'

/**
 * The engine's memoized views, one per scope key (held weakly) plus the global view, and their
 * render slots. A derivation that throws (a stack overflow inside preact can leave a computed
 * marked running, or holding the error) leaves `deriving` set; the next lookup then starts a new
 * generation and drops every view of the old one, so no error outlives the call that met it.
 */
export class ViewCache {
  readonly store: ScopedLayers<PromptLayer>
  readonly stats: PromptStats
  readonly carrierBase: object
  readonly slots: RenderSlots
  /** Moved only by `view`, after a derivation threw. */
  generation = 0
  /** Set while a view derives a fact; still set afterwards only when that derivation threw. */
  deriving = false
  #views = new WeakMap<ScopeKey, ScopeView>()
  #globalView: ScopeView

  constructor(store: ScopedLayers<PromptLayer>, stats: PromptStats, carrierBase: object, renderCacheScopes = Infinity) {
    this.store = store
    this.stats = stats
    this.carrierBase = carrierBase
    this.slots = new RenderSlots(renderCacheScopes, stats)
    this.#globalView = new ScopeView(undefined, this)
  }

  /**
   * The memoized view of `scope` (the global view for `undefined`), created on first use; starts a
   * new generation first when the last derivation threw. Throws a `TypeError` for a non-object scope.
   */
  view(scope: ScopeKey | undefined): ScopeView {
    if (this.deriving) {
      this.#views = new WeakMap()
      this.generation++
      this.#globalView = new ScopeView(undefined, this)
      this.slots.clear()
      this.deriving = false
    }
    return this.viewOf(scope)
  }

  /** Like `view`, but never starts a new generation (what a view's parent link reads). */
  viewOf(scope: ScopeKey | undefined): ScopeView {
    if (scope === undefined) return this.#globalView
    let view = this.#views.get(scope)
    if (view === undefined) {
      if (typeof scope !== 'object' || scope === null) {
        throw new TypeError(`assemble context "scope" must be a scope key object (got ${describeValue(scope)})`)
      }
      this.#views.set(scope, (view = new ScopeView(scope, this)))
    }
    return view
  }

  /** Drops the view of `scope` and its render slot; views below may still derive from it, and stay correct. */
  release(scope: ScopeKey): void {
    const view = this.#views.get(scope)
    if (view !== undefined) this.slots.delete(view)
    this.#views.delete(scope)
  }

  /** How many views keep a render slot, and how many slots were released for idleness (for tests and benchmarks). */
  renderSlots(): { readonly kept: number; readonly released: number } {
    return { kept: this.slots.kept, released: this.slots.released }
  }
}
