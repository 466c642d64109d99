import { batch, untracked, type Signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { cellOf } from '../signals/signal-table.js'
import type { NamedEntries, Undo } from './layer-entries.js'
import { scopeChainOf } from './parent-chain.js'
import { scopeOf, type ScopeKey } from './scope-key.js'

/** What a layer must answer so `ScopedLayers` can reclaim it. */
export interface ScopeLayer {
  /** `true` when the layer holds no registration. */
  isEmpty(): boolean
}

/** Options of `ScopedLayers.effect`. */
export interface LayerEffectOptions {
  /** The Cordis effect label, named after the call that made it (`systemPrompt.section()`). */
  readonly label: string
  /** Whether this registration and its undo call `onChange` (default `true`). */
  readonly notify?: boolean
}

/**
 * One eager global layer plus one lazy layer per scope key, held weakly by the key. Reads subscribe to the
 * layer slots and parent links they walk, so creating or reclaiming a layer, or re-linking a parent,
 * invalidates exactly the views whose chain passes through it.
 *
 *   merge(agent):  global ─▶ preset ─▶ agent      (later wins a name)
 *                  farthest             nearest
 */
export class ScopedLayers<L extends ScopeLayer> {
  /** Always exists; never reclaimed. */
  readonly global: L
  readonly #slots = new WeakMap<ScopeKey, Signal<L | undefined>>()
  readonly #createLayer: (scope: ScopeKey | undefined) => L
  readonly #onChange: (() => void) | undefined

  /** `createLayer` makes an empty layer (`undefined`: global); `onChange` runs after every successful registration and undo. */
  constructor(createLayer: (scope: ScopeKey | undefined) => L, onChange?: () => void) {
    this.#createLayer = createLayer
    this.#onChange = onChange
    this.global = createLayer(undefined)
  }

  /**
   * The exact layer of `scope`, or `undefined` (also for no scope; read `global`). Never creates a layer and
   * ignores the chain, because a scope's own restrictions must not pick up an ancestor's.
   */
  peek(scope: ScopeKey | undefined): L | undefined {
    return scope === undefined ? undefined : cellOf(this.#slots, scope).value
  }

  /** The existing scoped layers along `scope`'s chain, farthest ancestor first; without the global layer. */
  chainLayers(scope: ScopeKey | undefined): L[] {
    return scopeChainOf(scope).reverse().flatMap((key) => cellOf(this.#slots, key).value ?? [])
  }

  /** The named entries visible from `scope`, global first, nearest winning a name at the position it first appeared. */
  merge<V>(scope: ScopeKey | undefined, pick: (layer: L) => NamedEntries<V>): Map<string, V> {
    const merged = new Map<string, V>()
    for (const layer of [this.global, ...this.chainLayers(scope)]) pick(layer).forEach((value, name) => merged.set(name, value))
    return merged
  }

  /**
   * Runs `action` on the layer of `ctx`'s scope inside a Cordis effect owned by `ctx`'s fiber, in one `batch`,
   * and returns the exact `ctx.effect` disposer (it may return `undefined`: await it). A new layer is published
   * only once `action` succeeded; the undo is installed before any notification; an `onChange` that throws rolls
   * the registration back (without notifying again) and reaches the caller; the last undo of a layer reclaims it.
   */
  effect(ctx: Context, action: (layer: L) => Undo, options: LayerEffectOptions): () => Promise<void> | undefined {
    const scope = scopeOf(ctx)
    // Cleared for a rollback: the listener that just failed is not called again.
    let notify = options.notify !== false
    return batch(() => {
      // What `ctx.effect` resolves to, without the `Error` Cordis builds on every read of that mixin (docs/design.md).
      const dispose = ctx.fiber.effect(() => {
        const slot = scope === undefined ? undefined : cellOf(this.#slots, scope)
        const existing = slot === undefined ? this.global : slot.peek()
        const layer = existing ?? this.#createLayer(scope)
        const undo = action(layer)
        if (slot !== undefined && existing === undefined) slot.value = layer
        // Cordis calls this cleanup at most once, whichever of the disposer and the fiber's unload comes first.
        return () =>
          batch(() => {
            undo()
            if (slot !== undefined && slot.peek() === layer && untracked(() => layer.isEmpty())) slot.value = undefined
            if (notify) this.#onChange?.()
          })
      }, options.label)
      // Only now does Cordis hold the disposer, so an onChange that disposes the registration finds it.
      if (notify) {
        try {
          this.#onChange?.()
        } catch (error) {
          notify = false
          void dispose()
          throw error
        }
      }
      return dispose
    })
  }
}
