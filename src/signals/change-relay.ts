import { effect, signal, type ReadonlySignal } from '@preact/signals-core'

interface Watch {
  count: number
  readonly stop: () => void
}

/**
 * Moves one `pulse` signal whenever any of a changing set of sources gets a
 * new value. One small effect per source, so adding a source is O(1) and a
 * write re-runs only its own relay; an effect reading `pulse` runs once per `batch()`.
 *
 *     source a ─▶ relay a ─┐
 *     source b ─▶ relay b ─┼─▶ pulse ─▶ the one effect that reads it
 *     source c ─▶ relay c ─┘
 */
export class ChangeRelay {
  readonly #pulse = signal(0)
  readonly #watches = new Map<ReadonlySignal<unknown>, Watch>()

  /** Moves after every new value of a watched source; read it in the effect that reacts. */
  get pulse(): ReadonlySignal<number> {
    return this.#pulse
  }

  /** The number of distinct sources watched. */
  get size(): number {
    return this.#watches.size
  }

  /** Watches `source` once more (each `add` needs its own `delete`); does not move `pulse` for the first read. */
  add(source: ReadonlySignal<unknown>): void {
    const watch = this.#watches.get(source)
    if (watch !== undefined) {
      watch.count++
      return
    }
    const pulse = this.#pulse
    let subscribed = false
    const stop = effect(() => {
      try {
        source.value
      } catch {
        // A source whose derivation throws still changed; the error is the reader's, not the writer's.
      }
      if (!subscribed) {
        subscribed = true
        return
      }
      pulse.value = pulse.peek() + 1
    })
    this.#watches.set(source, { count: 1, stop })
  }

  /** Undoes one `add` of `source`; the last one stops its relay. Unknown sources are ignored. */
  delete(source: ReadonlySignal<unknown>): void {
    const watch = this.#watches.get(source)
    if (watch === undefined || --watch.count > 0) return
    this.#watches.delete(source)
    watch.stop()
  }

  /** Stops every relay; later `delete`s are no-ops. */
  clear(): void {
    for (const watch of this.#watches.values()) watch.stop()
    this.#watches.clear()
  }
}
