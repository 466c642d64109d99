import type { ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import type { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/named-entries.js'
import type { ScopeKey } from '../scope/scope-key.js'
import type { ResolvedSystemPromptConfig } from './config.js'
import type { PromptLayer } from './entries.js'
import { Evaluation } from './evaluation.js'
import { Pipeline, type EventDispatcher } from './pipeline.js'
import { Registration } from './registration.js'
import { createStats, type PromptStats } from './stats.js'
import type { AssembleContext, PromptAssembly, PromptPreparation } from './types.js'
import { ViewCache } from './view-cache.js'
import type { ScopeView } from './view.js'

export type { EventDispatcher } from './pipeline.js'

/**
 * The registry and its memoized assembly graph, free of Cordis' proxies: the
 * `SystemPrompt` service reads it once per call and everything on the hot
 * path below is plain objects and signals. It wires four parts together:
 *
 *     Registration ──▶ store ──▶ ViewCache (views, per-view step caches)
 *                                    ▲
 *     Pipeline (prepare / assemble / refresh) ──▶ Evaluation (provider reads)
 */
export class PromptEngine {
  readonly stats: PromptStats = createStats()
  readonly #registration: Registration
  readonly #views: ViewCache
  readonly #pipeline: Pipeline

  constructor(config: ResolvedSystemPromptConfig, events: EventDispatcher, carrierBase: object) {
    this.#registration = new Registration(this.stats)
    this.#views = new ViewCache(this.#registration.store, this.stats, carrierBase, config.renderCacheScopes)
    const evaluation = new Evaluation(this.stats, config, this.#views)
    this.#pipeline = new Pipeline(this.stats, this.#views, evaluation, events, config.stabilityGuard)
  }

  /** The layered registry. */
  get store(): ScopedLayers<PromptLayer> {
    return this.#registration.store
  }

  /** The memoized view of `scope` (the global view for `undefined`); see `ViewCache.view`. */
  view(scope: ScopeKey | undefined): ScopeView {
    return this.#views.view(scope)
  }

  /** See `ViewCache.renderSlots` (config `renderCacheScopes`). */
  renderSlots(): { readonly kept: number; readonly released: number } {
    return this.#views.renderSlots()
  }

  /** Stops hearing about parent re-links and registered signals; called when the service unloads. */
  close(): void {
    this.#registration.close()
  }

  /**
   * Drops the memoized view of `scope` (its computeds, tool memo and render
   * memos). Called when a scope fiber is disposed, so a disposed scope whose
   * key is still referenced elsewhere retains nothing here; a later assembly
   * of that key simply builds a fresh view.
   */
  release(scope: ScopeKey): void {
    this.#views.release(scope)
  }

  /** See `Registration.register`. */
  register(
    ctx: Context,
    label: string,
    input: ReadonlySignal<unknown> | undefined,
    insert: (layer: PromptLayer) => Undo,
  ): () => Promise<void> {
    return this.#registration.register(ctx, label, input, insert)
  }

  /** See `Registration.changeEffect`. */
  changeEffect(emit: () => void): () => void {
    return this.#registration.changeEffect(emit)
  }

  /** See `SystemPrompt.prepare`. */
  prepare(context: AssembleContext): Promise<PromptPreparation> {
    return this.#pipeline.prepare(context)
  }

  /** See `SystemPrompt.assemble`. */
  assemble(context: AssembleContext, preparation?: PromptPreparation): Promise<PromptAssembly> {
    return this.#pipeline.assemble(context, preparation)
  }

  /** See `SystemPrompt.refreshContext`. */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext): T {
    return this.#pipeline.refreshContext(accepted, context)
  }
}
