import { batch, signal, type ReadonlySignal, type Signal } from '@preact/signals-core'

/** The cells of every empty table; never written (`set` swaps in a map of its own first). */
const EMPTY: ReadonlyMap<unknown, unknown> = new Map()
const REMOVED: unique symbol = Symbol('removed')

/** The signal `cells` holds for `key`, created holding `undefined` on first use (a weakly held, reactive slot). */
export function cellOf<K extends object, V>(cells: WeakMap<K, Signal<V | undefined>>, key: K): Signal<V | undefined> {
  let cell = cells.get(key)
  if (cell === undefined) cells.set(key, (cell = signal<V | undefined>(undefined)))
  return cell
}

/** Yields `map(item)` for each item of `items` when it is reached, so a live iterator stays live. */
export function* mapLive<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U, void> {
  for (const item of items) yield map(item)
}

/**
 * A keyed, insertion-ordered table whose reads subscribe and whose writes notify: `get`/`has` of a present key
 * subscribe to that entry; everything else to `version`. An overwrite keeps its position (an `Object.is`-equal one
 * changes nothing). Iterators are live like a `Map`'s until the table drains.
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
    if (cell !== undefined) return cell.value
    this.#version.value
    return undefined
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
    if (cell !== undefined && Object.is(cell.peek(), value)) return
    if ((this.#cells as ReadonlyMap<unknown, unknown>) === EMPTY) this.#cells = new Map()
    batch(() => {
      if (cell === undefined) this.#cells.set(key, signal(value))
      else cell.value = value
      this.#version.value = this.#version.peek() + 1
    })
  }

  /** Removes `key`; returns whether it was present. Notifies that entry's readers and `version`'s. */
  delete(key: K): boolean {
    const cell = this.#cells.get(key)
    if (cell === undefined) return false
    this.#cells.delete(key)
    if (this.#cells.size === 0) this.#cells = EMPTY as Map<K, Signal<V>>
    batch(() => {
      this.#version.value = this.#version.peek() + 1
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
    return mapLive(this.#cells.values(), (cell) => cell.peek())
  }

  /** A live iterator of `[key, value]` pairs in insertion order; subscribes to `version` when called. */
  entries(): IterableIterator<[K, V]> {
    this.#version.value
    return mapLive(this.#cells.entries(), ([key, cell]): [K, V] => [key, cell.peek()])
  }

  /** Calls `visit` for every entry in insertion order; cheaper than `entries()` on hot paths. */
  forEach(visit: (value: V, key: K) => void): void {
    this.#version.value
    for (const [key, cell] of this.#cells) visit(cell.peek(), key)
  }
}
