import { batch, signal, type ReadonlySignal, type Signal } from '@preact/signals-core'

/** The cells of every empty table; never written (`set` swaps in a map of its own first). */
const EMPTY: ReadonlyMap<unknown, unknown> = new Map()

/**
 * A keyed table whose reads subscribe and whose writes notify. `get`/`has` of
 * a present key subscribe to that entry only; of an absent key, `size` and
 * every iteration subscribe to `version` only, which moves on every insertion,
 * removal and overwrite (so iterating a thousand entries depends on one signal).
 *
 * Insertion-ordered; an overwrite keeps its position, and an `Object.is`-equal
 * one changes nothing. Iterators are live like a `Map`'s within one non-empty
 * generation: a table that drains starts a new one, so an iterator taken before
 * yields nothing inserted after.
 */
export class SignalTable<K, V> {
  // Shared while empty: most tables of a layer never get an entry.
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
    this.get(key)
    return this.#cells.has(key)
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

  /** Removes `key`; returns whether it was present. Notifies that entry's readers and `version`'s. */
  delete(key: K): boolean {
    const cell = this.#cells.get(key)
    if (cell === undefined) return false
    this.#cells.delete(key)
    if (this.#cells.size === 0) this.#cells = EMPTY as Map<K, Signal<V>>
    batch(() => {
      this.#version.value++
      // Its readers hold the cell, not the map: bump it so they rerun.
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

/** Each cell's value when it is reached; `cells` is the map's own live iterator. */
function* liveValues<V>(cells: IterableIterator<Signal<V>>): Generator<V, undefined> {
  for (const cell of cells) yield cell.peek()
  return undefined
}

function* liveEntries<K, V>(cells: IterableIterator<[K, Signal<V>]>): Generator<[K, V], undefined> {
  for (const [key, cell] of cells) yield [key, cell.peek()]
  return undefined
}
