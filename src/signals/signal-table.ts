import { batch, signal, type ReadonlySignal, type Signal } from '@preact/signals-core'

/** The cells of every empty table; never written (`set` swaps in a map of its own first). */
const EMPTY: ReadonlyMap<unknown, unknown> = new Map()

/**
 * A keyed table whose reads subscribe and whose writes notify, with
 * per-entry granularity:
 *
 * - `get(key)`/`has(key)` of a present key subscribe to that entry only, so
 *   writing another key does not invalidate the reader;
 * - `get(key)`/`has(key)` of an absent key, `size`, and every iteration
 *   subscribe to the table's `version` only, which moves on every insertion,
 *   removal and overwrite — so a reader that iterates a table of a thousand
 *   entries depends on one signal, not a thousand.
 *
 * Iteration yields entries in insertion order; overwriting a present key keeps
 * its position. An overwrite with an `Object.is`-equal value changes nothing.
 * Iterators are live, like a `Map`'s, within one non-empty generation of the
 * table: an entry inserted before the iterator reaches the end is yielded, a
 * removed one is skipped, and a table that drains starts a new generation, so
 * an iterator taken before it yields nothing inserted after.
 */
export class SignalTable<K, V> {
  // Shared while empty: most tables of a scope's layer (its tools, its
  // suppressors) never get an entry, so they hold no map of their own.
  #cells = EMPTY as Map<K, Signal<V>>
  readonly #version = signal(0)

  /** Moves on every insertion, removal and overwrite. */
  get version(): ReadonlySignal<number> {
    return this.#version
  }

  /** The number of entries; subscribes to `version`. */
  get size(): number {
    this.#version.value
    return this.#cells.size
  }

  /** The value of `key` (`undefined` when absent); subscribes to that entry, or to `version` when absent. */
  get(key: K): V | undefined {
    const cell = this.#cells.get(key)
    if (cell === undefined) {
      this.#version.value
      return undefined
    }
    return cell.value
  }

  /** Whether `key` is present; subscribes like `get`. */
  has(key: K): boolean {
    const cell = this.#cells.get(key)
    if (cell === undefined) {
      this.#version.value
      return false
    }
    cell.value
    return true
  }

  /** Reads the current value of `key` without subscribing to anything. */
  peek(key: K): V | undefined {
    return this.#cells.get(key)?.peek()
  }

  /** Inserts at the end, or overwrites in place (notifying that entry's readers and iterators). */
  set(key: K, value: V): void {
    const cell = this.#cells.get(key)
    if (cell !== undefined) {
      if (Object.is(cell.peek(), value)) return
      batch(() => {
        cell.value = value
        this.#version.value++
      })
      return
    }
    if ((this.#cells as ReadonlyMap<unknown, unknown>) === EMPTY) this.#cells = new Map()
    this.#cells.set(key, signal(value))
    this.#version.value++
  }

  /**
   * Removes `key`; returns whether it was present. Readers of that entry and of
   * `version` are notified: the cell is bumped to a fresh version before it is
   * dropped, because its readers hold the cell and never look at the map again.
   */
  delete(key: K): boolean {
    const cell = this.#cells.get(key)
    if (cell === undefined) return false
    this.#cells.delete(key)
    // A drained table starts a new generation (and gives its map back).
    if (this.#cells.size === 0) this.#cells = EMPTY as Map<K, Signal<V>>
    batch(() => {
      this.#version.value++
      // A removed cell is never read again, but its subscribers must rerun.
      ;(cell as Signal<unknown>).value = REMOVED
    })
    return true
  }

  /** A live iterator of the keys in insertion order; subscribes to `version` when called. */
  keys(): IterableIterator<K> {
    this.#version.value
    return this.#cells.keys()
  }

  /** A live iterator of the values in insertion order; subscribes to `version` when called. */
  values(): IterableIterator<V> {
    this.#version.value
    return liveValues(this.#cells.values())
  }

  /** A live iterator of `[key, value]` pairs in insertion order; subscribes to `version` when called. */
  entries(): IterableIterator<[K, V]> {
    this.#version.value
    return liveEntries(this.#cells.entries())
  }

  /** Calls `visit` for every entry in insertion order; cheaper than `entries()` on hot paths. */
  forEach(visit: (value: V, key: K) => void): void {
    this.#version.value
    for (const [key, cell] of this.#cells) visit(cell.peek(), key)
  }
}

const REMOVED: unique symbol = Symbol('removed')

/** Each cell's value when it is reached; `cells` is the map's own (live) iterator, taken by the caller. */
function* liveValues<V>(cells: IterableIterator<Signal<V>>): Generator<V, undefined> {
  for (const cell of cells) yield cell.peek()
  return undefined
}

/** Each entry with its cell's value when it is reached; `cells` is the map's own (live) iterator. */
function* liveEntries<K, V>(cells: IterableIterator<[K, Signal<V>]>): Generator<[K, V], undefined> {
  for (const [key, cell] of cells) yield [key, cell.peek()]
  return undefined
}
