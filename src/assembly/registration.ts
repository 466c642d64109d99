import { signal, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { ChangeRelay } from '../signals/change-relay.js'
import { watchParentChanges } from '../scope/parent-chain.js'
import { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/named-entries.js'
import { PromptLayer } from './entries.js'
import type { PromptStats } from './stats.js'

/**
 * The layered registry and what tells the service it changed: a signal that
 * moves on every registration, disposal and parent re-link, and a relay over
 * it and every registered signal-valued input, read by one change effect.
 */
export class Registration {
  readonly store: ScopedLayers<PromptLayer>
  /** Moves on every registration, disposal and parent re-link; relayed by `#changes`. */
  readonly #edits = signal(0)
  /** Watches `#edits` and every registered signal-valued input; the change effect reads its pulse. */
  readonly #changes = new ChangeRelay()
  readonly #stats: PromptStats
  readonly #unwatchParents: () => void

  constructor(stats: PromptStats) {
    this.#stats = stats
    // peek, not value: a registration made inside someone's effect must not subscribe it.
    this.store = new ScopedLayers(
      (scope) => new PromptLayer(scope),
      () => void (this.#edits.value = this.#edits.peek() + 1),
    )
    this.#changes.add(this.#edits)
    // Any re-link may change some scope's effective view here (a scope with no
    // layer of its own inherits from its new parent), so every one counts.
    this.#unwatchParents = watchParentChanges(this.#edits)
  }

  /** Stops hearing about parent re-links and registered signals. */
  close(): void {
    this.#unwatchParents()
    this.#changes.clear()
  }

  /**
   * Registers through `ctx` (visibility and ownership) with `insert`, which
   * must throw before changing anything. A signal-valued input is watched for
   * the change effect for as long as the registration lives (O(1) to add and
   * to remove, whatever else is registered). Returns the Cordis disposer.
   */
  register(
    ctx: Context,
    label: string,
    input: ReadonlySignal<unknown> | undefined,
    insert: (layer: PromptLayer) => Undo,
  ): () => Promise<void> {
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
   * The body of the effect that calls `emit` after every effective registry
   * change (a registration, a disposal, a layer or parent change, or a new
   * value of a registered signal), once per `batch()`; the first run only
   * subscribes. It reads one signal, the relay's pulse, so a write costs the
   * same however many signal inputs are registered (see `ChangeRelay`).
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
        this.#stats.changeEvents++
        emit()
      })
    }
  }
}
