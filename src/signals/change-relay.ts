import { effect, signal, type ReadonlySignal } from '@preact/signals-core'

interface Watch {
  count: number
  readonly stop: () => void
}

/**
 * Watches a changing set of signals and moves one `pulse` signal when any of
 * them gets a new value. Each watched signal has its own small effect (its
 * relay), so adding or removing a source costs O(1) and a write re-runs only
 * the relay of the written source, however many others are watched: a single
 * effect reading every source would re-read them all on every change, and
 * re-subscribe to all of them on every addition.
 *
 *     source a ─▶ relay a ─┐
 *     source b ─▶ relay b ─┼─▶ pulse ─▶ the one effect that reads it
 *     source c ─▶ relay c ─┘
 *
 * A `batch()` that changes several sources moves `pulse` once per relay, but
 * an effect reading `pulse` runs once, after every relay of that batch: preact
 * runs the relays when the outermost batch ends and only then the effects their
 * writes notified. A source whose read throws still counts as changed; the
 * error is swallowed here (it belongs to whoever reads the source for its
 * value), so a write never throws at the writer because of a relay.
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

  /**
   * Watches `source` once more: each `add` needs its own `delete`, and a source
   * added twice keeps one relay. Reads `source` once now (to subscribe) and
   * does not move `pulse` for that read.
   */
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
    if (watch === undefined) return
    if (--watch.count > 0) return
    this.#watches.delete(source)
    watch.stop()
  }

  /** Stops every relay (the sources are no longer subscribed to); later `delete`s are no-ops. */
  clear(): void {
    for (const watch of this.#watches.values()) watch.stop()
    this.#watches.clear()
  }
}
