import { signal, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { ChangeRelay } from '../signals/tracked.js'
import { watchParentChanges } from '../scope/parent-chain.js'
import { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/layer-entries.js'
import { PromptLayer } from './entries.js'
import type { PromptStats } from './types.js'

/**
 * The layered registry and what tells the service it changed: a relay over a signal that moves on
 * every registration, disposal and parent re-link, and over every registered signal-valued input.
 */
export class Registration {
  readonly #edits = signal(0)
  // peek, not value: a registration made inside someone's effect must not subscribe it.
  readonly store = new ScopedLayers((scope) => new PromptLayer(scope), () => void (this.#edits.value = this.#edits.peek() + 1))
  readonly #changes = new ChangeRelay()
  // Any re-link may change some scope's effective view (a scope without a layer inherits from its new parent).
  readonly #unwatchParents = watchParentChanges(this.#edits)

  constructor(private readonly stats: PromptStats) {
    this.#changes.add(this.#edits)
  }

  /** Stops hearing about parent re-links and registered signals. */
  close(): void {
    this.#unwatchParents()
    this.#changes.clear()
  }

  /**
   * Registers through `ctx` (visibility and ownership) with `insert`, which must throw before changing
   * anything; a signal-valued `input` is watched while the registration lives. Returns the Cordis disposer.
   */
  register(ctx: Context, label: string, input: ReadonlySignal<unknown> | undefined, insert: (layer: PromptLayer) => Undo): () => Promise<void> {
    return this.store.effect(
      ctx,
      (layer) => {
        const undo = insert(layer)
        if (input === undefined) return undo
        this.#changes.add(input)
        return () => {
          undo()
          this.#changes.delete(input)
        }
      },
      { label },
    )
  }

  /**
   * The body of the effect that calls `emit` after every effective registry change, once per `batch()`;
   * the first run only subscribes. It reads only the relay's pulse, so a write costs the same however many are registered.
   */
  changeEffect(emit: () => void): () => void {
    let first = true
    return () => {
      this.#changes.pulse.value
      if (first) {
        first = false
        return
      }
      untracked(() => {
        this.stats.changeEvents++
        emit()
      })
    }
  }
}
