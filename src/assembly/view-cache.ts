import type { ScopedLayers } from '../scope/scoped-layers.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { type PromptLayer, type ToolEntry } from './entries.js'
import { describeValue } from './errors.js'
import type { RenderSlot } from './provenance.js'
import { RenderSlots } from './render-slots.js'
import type { PromptStats } from './stats.js'
import type { ToolMemo } from './tools.js'
import { ScopeView, type ViewHost } from './view.js'

/**
 * The engine's memoized views, one per scope key (held weakly) plus the
 * global view, and the per-view step caches beside them (the tools last
 * built and the render slot), so a view itself stays computeds only. At
 * most config `renderCacheScopes` views keep a render slot: see
 * `RenderSlots`.
 *
 * After a derivation that threw, every view is dropped on the next lookup (a
 * new generation): its computeds may hold the error, or be left marked
 * running by a stack overflow inside preact, and nothing else clears that.
 */
export class ViewCache {
  #views = new WeakMap<ScopeKey, ScopeView>()
  #globalView: ScopeView
  readonly #host: ViewHost
  /** Keyed by the tool providers a view derives: views without own providers share their parent's list, and so its memo. */
  readonly #toolMemos = new WeakMap<readonly ToolEntry[], ToolMemo>()
  readonly #slots: RenderSlots
  readonly #store: ScopedLayers<PromptLayer>
  readonly #stats: PromptStats
  readonly #carrierBase: object

  constructor(store: ScopedLayers<PromptLayer>, stats: PromptStats, carrierBase: object, renderCacheScopes = Infinity) {
    this.#slots = new RenderSlots(renderCacheScopes, stats)
    this.#store = store
    this.#stats = stats
    this.#carrierBase = carrierBase
    this.#host = {
      viewOf: (scope) => this.#viewOf(scope),
      current: (scope) => this.view(scope),
      generation: 0,
      deriving: false,
    }
    this.#globalView = this.#create(undefined)
  }

  #create(scope: ScopeKey | undefined): ScopeView {
    return new ScopeView(scope, this.#store, this.#stats, this.#carrierBase, this.#host)
  }

  /**
   * The memoized view of `scope` (the global view for `undefined`), created on
   * first use; starts a new generation first when the last derivation threw.
   * Throws a `TypeError` for a scope that is not an object.
   */
  view(scope: ScopeKey | undefined): ScopeView {
    const host = this.#host
    if (host.deriving) {
      this.#views = new WeakMap()
      host.generation++
      this.#globalView = this.#create(undefined)
      this.#slots.clear()
      host.deriving = false
    }
    return this.#viewOf(scope)
  }

  #viewOf(scope: ScopeKey | undefined): ScopeView {
    if (scope === undefined) return this.#globalView
    let view = this.#views.get(scope)
    if (view === undefined) {
      if (typeof scope !== 'object' || scope === null) {
        throw new TypeError(`assemble context "scope" must be a scope key object (got ${describeValue(scope)})`)
      }
      this.#views.set(scope, (view = this.#create(scope)))
    }
    return view
  }

  /**
   * Drops the memoized view of `scope` (its computeds, tool memo and render
   * slot). Views below may still derive from it; they stay correct, but it
   * keeps no rendered text or tools for them.
   */
  release(scope: ScopeKey): void {
    const view = this.#views.get(scope)
    // Its tool memo goes with its own provider list, if it has one (a shared list's memo stays for the others).
    if (view !== undefined) this.#slots.delete(view)
    this.#views.delete(scope)
  }

  /** The render slot of `view`, created on first use (and again after a release); see `RenderSlots.slotOf`. */
  slotOf(view: ScopeView): RenderSlot {
    return this.#slots.slotOf(view)
  }

  /** How many views keep a render slot, and how many slots were released for idleness (for tests and benchmarks). */
  renderSlots(): { readonly kept: number; readonly released: number } {
    return { kept: this.#slots.kept, released: this.#slots.released }
  }

  /**
   * The tools last built from the provider list `entries` (a view's derived
   * tools), with what they were built from. Every view with that list shares
   * it: scopes without providers of their own keep no tools each.
   */
  toolMemoOf(entries: readonly ToolEntry[]): ToolMemo | undefined {
    return this.#toolMemos.get(entries)
  }

  /** Keeps `memo` as the tools last built from `entries`. */
  keepToolMemo(entries: readonly ToolEntry[], memo: ToolMemo): void {
    this.#toolMemos.set(entries, memo)
  }
}
