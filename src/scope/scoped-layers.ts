import { batch, signal, untracked, type Signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import type { NamedEntries, Undo } from './named-entries.js'
import { scopeChainOf } from './parent-chain.js'
import { scopeOf, type ScopeKey } from './scope-key.js'

/** What a layer must answer so `ScopedLayers` can reclaim it. */
export interface ScopeLayer {
  /** `true` when the layer holds no registration, so it may be reclaimed. */
  isEmpty(): boolean
}

/** Options of `ScopedLayers.effect`. */
export interface LayerEffectOptions {
  /** The Cordis effect label, named after the call that made it (`systemPrompt.section()`). */
  readonly label: string
  /** Whether this registration and its undo call `onChange` (default `true`). */
  readonly notify?: boolean
}

/** One name's winner in `mergeNamed`, with the entries it shadows (farthest first). */
export interface MergedEntry<V> {
  readonly value: V
  readonly shadows: readonly V[]
}

/**
 * The shadowing rule, once: folds the named entries of `layers` (farthest
 * first) into an insertion-ordered map in which a nearer layer's entry wins
 * its name and records the entries it hides.
 */
export function mergeNamed<L, V>(layers: readonly L[], pick: (layer: L) => NamedEntries<V>): Map<string, MergedEntry<V>> {
  const merged = new Map<string, MergedEntry<V>>()
  for (const layer of layers) {
    pick(layer).forEach((value, name) => {
      const hidden = merged.get(name)
      merged.set(name, { value, shadows: hidden === undefined ? [] : [...hidden.shadows, hidden.value] })
    })
  }
  return merged
}

/**
 * One eager global layer plus one lazily created layer per scope key.
 *
 * Every read is signal-backed: `peek`, `chainLayers` and `merge` inside a
 * `computed` subscribe to the layer slots and parent links they walked, so
 * creating or reclaiming a layer, or re-linking a parent, invalidates exactly
 * the views whose chain passes through it. Scoped layers are held weakly by
 * their key: an unreachable key takes its layer with it.
 *
 *   merge(agent):  global ─▶ preset ─▶ agent      (later wins a name)
 *                  farthest             nearest
 */
export class ScopedLayers<L extends ScopeLayer> {
  /** The global layer; it always exists and is never reclaimed. */
  readonly global: L
  readonly #slots = new WeakMap<ScopeKey, Signal<L | undefined>>()
  readonly #createLayer: (scope: ScopeKey | undefined) => L
  readonly #onChange: (() => void) | undefined

  /**
   * @param createLayer - builds an empty layer for a scope key (`undefined` for the global layer).
   * @param onChange - called after every successful registration and every undo.
   */
  constructor(createLayer: (scope: ScopeKey | undefined) => L, onChange?: () => void) {
    this.#createLayer = createLayer
    this.#onChange = onChange
    this.global = createLayer(undefined)
  }

  #slot(scope: ScopeKey): Signal<L | undefined> {
    let slot = this.#slots.get(scope)
    if (slot === undefined) this.#slots.set(scope, (slot = signal<L | undefined>(undefined)))
    return slot
  }

  /**
   * The exact layer of `scope`, or `undefined` when it has none, and for
   * `undefined` (no scope has no overlay; read `global` for the global
   * layer). Never creates a layer and ignores the chain, because a scope's
   * own restrictions must not pick up an ancestor's.
   */
  peek(scope: ScopeKey | undefined): L | undefined {
    if (scope === undefined) return undefined
    return this.#slot(scope).value
  }

  /**
   * The existing scoped layers along `scope`'s chain, farthest ancestor first
   * and the exact scope's last. The global layer is not included.
   */
  chainLayers(scope: ScopeKey | undefined): L[] {
    const chain = scopeChainOf(scope)
    const layers: L[] = []
    for (let i = chain.length - 1; i >= 0; i--) {
      const layer = this.#slot(chain[i]!).value
      if (layer !== undefined) layers.push(layer)
    }
    return layers
  }

  /**
   * The named entries visible from `scope`: the global layer's, then each
   * chain layer's from the farthest ancestor to the exact scope, the nearest
   * winning a name. A name keeps the position where it first appeared.
   */
  merge<V>(scope: ScopeKey | undefined, pick: (layer: L) => NamedEntries<V>): Map<string, V> {
    const merged = new Map<string, V>()
    for (const [name, { value }] of mergeNamed([this.global, ...this.chainLayers(scope)], pick)) merged.set(name, value)
    return merged
  }

  /**
   * Runs `action` on the layer of `ctx`'s scope inside a Cordis effect owned
   * by `ctx`'s fiber, so visibility and ownership come from the same context.
   *
   * - The exact scoped layer is created lazily, and published only once
   *   `action` succeeded: an action that throws leaves no layer behind and
   *   notifies nobody.
   * - The undo is installed (Cordis holds the disposer) before any
   *   notification: the whole call runs in one `batch`.
   * - An `onChange` that throws on registration rolls it back (the effect is
   *   disposed, so nothing stays registered and a created layer is reclaimed)
   *   and the error reaches the caller; the rollback does not notify again.
   * - Undoing empties and reclaims the exact layer when it was its last entry.
   *
   * Returns the exact `ctx.effect` disposer.
   */
  effect(ctx: Context, action: (layer: L) => Undo, options: LayerEffectOptions): () => Promise<void> {
    const scope = scopeOf(ctx)
    const notify = options.notify !== false
    // Set while a registration whose notification threw is being undone: the
    // listener that just failed is not called a second time for the rollback.
    let rollingBack = false
    return batch(() => {
      const dispose = ctx.effect(() => {
        const slot = scope === undefined ? undefined : this.#slot(scope)
        const existing = slot === undefined ? this.global : slot.peek()
        const layer = existing ?? this.#createLayer(scope)
        const undo = action(layer)
        if (slot !== undefined && existing === undefined) {
          slot.value = layer
        }
        let undone = false
        return () => {
          if (undone) return
          undone = true
          batch(() => {
            undo()
            if (slot !== undefined && slot.peek() === layer && untracked(() => layer.isEmpty())) {
                  slot.value = undefined
            }
            if (notify && !rollingBack) this.#onChange?.()
          })
        }
      }, options.label)
      // Only now does Cordis hold the disposer, so even a plain (non-signal)
      // onChange that disposes the registration at once finds it installed.
      if (notify) {
        try {
          this.#onChange?.()
        } catch (error) {
          rollingBack = true
          void dispose()
          throw error
        }
      }
      return dispose
    })
  }
}
