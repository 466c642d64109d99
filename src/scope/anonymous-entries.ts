import { SignalTable } from '../signals/signal-table.js'
import type { Undo } from './named-entries.js'

/**
 * Anonymous, insertion-ordered entries of one layer, signal-backed. Every
 * `append` is its own registration: equal (even identical) values stay
 * independent, and each undo removes exactly its own.
 */
export class AnonymousEntries<V> {
  // Keyed by a fresh token per append, so equal values never collide.

  readonly #table = new SignalTable<object, V>()

  /** Adds `value` at the end; the returned undo is idempotent and removes only this append. */
  append(value: V): Undo {
    const token = {}
    this.#table.set(token, value)
    return () => {
      this.#table.delete(token)
    }
  }

  /**
   * A live iterator of the values in insertion order, as a `Map`'s: a value
   * appended before it reaches the end is yielded, a removed one is skipped,
   * and once the table drains, an iterator taken before yields nothing
   * appended after. Calling it subscribes (inside a `computed`/`effect`) to
   * every append and removal; spread it for a snapshot.
   */
  values(): IterableIterator<V> {
    return this.#table.values()
  }

  /** Calls `visit` in insertion order with each entry's position. */
  forEach(visit: (value: V, index: number) => void): void {
    let index = 0
    this.#table.forEach((value) => visit(value, index++))
  }

  /** Whether no entry is registered. */
  isEmpty(): boolean {
    return this.#table.size === 0
  }

  /** The number of entries; subscribes like every other read. */
  get size(): number {
    return this.#table.size
  }
}
