import { signal, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { ChangeRelay } from '../signals/tracked.js'
import { watchParentChanges } from '../scope/parent-chain.js'
import { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/layer-entries.js'
import { PromptLayer } from './entries.js'
import type { PromptStats } from './types.js'

/** The layered registry, and a relay that moves on every registration, disposal, parent re-link and signal input write. */
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

  /** Registers through `ctx` with `insert` (which throws before changing anything), watching `input` while it lives. */
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

  /** An effect body that calls `emit` once per `batch()` after any registry change; its first run only subscribes. */
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
