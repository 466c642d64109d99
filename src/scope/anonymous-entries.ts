import { SignalTable } from '../signals/signal-table.js'
import type { Undo } from './named-entries.js'

/**
 * Anonymous, insertion-ordered, signal-backed entries of one layer. Every
 * `append` is its own registration: equal values stay independent, and each
 * undo removes exactly its own.
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

  /** A live iterator of the values in insertion order, as `NamedEntries.keys()`; subscribes to every append and removal. */
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
