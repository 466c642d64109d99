import type { ScopedLayers } from '../scope/scoped-layers.js'
import { assertScopeKey, type ScopeKey } from '../scope/scope-key.js'
import type { PromptLayer } from './entries.js'
import type { RenderSlot } from './provenance.js'
import type { PromptStats } from './types.js'
import { ScopeView } from './view.js'

/** A view's render slot; under a finite limit also a weak link to its view, its place in the recency order. */
type KeptSlot = RenderSlot & { readonly ref?: WeakRef<ScopeView> }

/**
 * The engine's memoized views, one per scope key (held weakly) plus the global view, and the render
 * slots of the `limit` most recently used (see `slotOf`). The order holds weak links only, so it keeps
 * no view, slot or render cache alive. A released view's next assembly renders from scratch: equal
 * output, new objects.
 *
 * A derivation that throws (a stack overflow inside preact can leave a computed marked running, or
 * holding the error) leaves `deriving` set; the next lookup then starts a new generation and drops
 * every view and slot of the old one, so no error outlives the call that met it. Releasing a parent's
 * view does the same, so nothing below keeps what the disposed parent registered.
 */
export class ViewCache {
  generation = 0
  /** Set while a view derives a fact; still set afterwards only when that derivation threw. */
  deriving = false
  #views = new WeakMap<ScopeKey, ScopeView>()
  #globalView: ScopeView
  #slots = new WeakMap<ScopeView, KeptSlot>()
  /** Under a finite limit, least recent first; a collected view's link stays until it comes up for release. */
  readonly #order = new Set<WeakRef<ScopeView>>()
  #released = 0

  constructor(
    readonly store: ScopedLayers<PromptLayer>,
    readonly stats: PromptStats,
    readonly carrierBase: object,
    private readonly limit = Infinity,
  ) {
    this.#globalView = new ScopeView(undefined, this)
  }

  /** Under a finite `renderCacheScopes`: views keeping a render slot (collected ones until they come up) and views released. */
  get renderSlots(): { readonly kept: number; readonly released: number } {
    return { kept: this.#order.size, released: this.#released }
  }

  /** The view of `scope` (global for `undefined`), in a new generation if a derivation threw; a `TypeError` for a non-object. */
  view(scope: ScopeKey | undefined): ScopeView {
    if (this.deriving) this.#restart()
    return this.viewOf(scope)
  }

  /** Drops every view and slot: a new generation derives afresh (old views hand over to it). */
  #restart(): void {
    this.#views = new WeakMap()
    this.generation++
    this.#globalView = new ScopeView(undefined, this)
    this.#slots = new WeakMap()
    this.#order.clear()
    this.deriving = false
  }

  /** Like `view`, but never starts a new generation (what a view's parent link reads). */
  viewOf(scope: ScopeKey | undefined): ScopeView {
    if (scope === undefined) return this.#globalView
    let view = this.#views.get(scope)
    if (view === undefined) {
      assertScopeKey(scope, 'assemble context "scope"')
      this.#views.set(scope, (view = new ScopeView(scope, this)))
    }
    return view
  }

  /** The slot of `view`, created on first use; makes `view` the most recent, releasing the least recent slot beyond `limit`. */
  slotOf(view: ScopeView): RenderSlot {
    let slot = this.#slots.get(view)
    if (slot === undefined) {
      slot = this.limit === Infinity ? { stats: this.stats } : { stats: this.stats, ref: new WeakRef(view) }
      this.#slots.set(view, slot)
    }
    const { ref } = slot
    if (ref === undefined) return slot
    this.#order.delete(ref)
    this.#order.add(ref)
    if (this.#order.size > this.limit) {
      const oldest = this.#order.values().next().value!
      this.#order.delete(oldest)
      const released = oldest.deref()
      if (released !== undefined && this.#slots.get(released)?.ref === oldest) {
        this.#slots.delete(released)
        this.#released++
      }
    }
    return slot
  }

  /**
   * Drops the view of `scope` and its render slot. A view that was ever a parent starts a new generation instead: the
   * views below hold plans derived from it (its registrations' closures), until they next derive.
   */
  release(scope: ScopeKey): void {
    const view = this.#views.get(scope)
    this.#views.delete(scope)
    if (view === undefined) return
    if (view.parented) return this.#restart()
    const ref = this.#slots.get(view)?.ref
    this.#slots.delete(view)
    if (ref !== undefined) this.#order.delete(ref)
  }
}
