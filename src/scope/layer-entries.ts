import { mapLive, SignalTable } from '../signals/signal-table.js'

/** A removal capability: removes exactly one insertion, once; later calls do nothing. */
export type Undo = () => void

/**
 * Named, insertion-ordered, signal-backed entries of one layer: reads subscribe and every insertion or
 * removal notifies. The owner supplies the duplicate error so the message names its own kind of entry.
 */
export class NamedEntries<V> {
  // Each insertion gets its own slot, so a stale undo can tell a later re-insert of the name apart.
  readonly #table = new SignalTable<string, { readonly value: V }>()
  readonly #duplicateError: (name: string) => Error

  constructor(duplicateError: (name: string) => Error) {
    this.#duplicateError = duplicateError
  }

  /** Adds `value` under `name` at the end, or throws the duplicate error; the undo never removes a later re-insert. */
  insert(name: string, value: V): Undo {
    if (this.#table.peek(name) !== undefined) throw this.#duplicateError(name)
    const slot = { value }
    this.#table.set(name, slot)
    return () => {
      if (this.#table.peek(name) === slot) this.#table.delete(name)
    }
  }

  /** The value registered under `name`, or `undefined`. */
  get(name: string): V | undefined {
    return this.#table.get(name)?.value
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#table.has(name)
  }

  /** A live iterator in insertion order, as a `Map`'s until the entries drain; subscribes to every insertion and removal. */
  keys(): IterableIterator<string> {
    return this.#table.keys()
  }

  /** `[name, value]` pairs; live, like `keys()`. */
  entries(): IterableIterator<[string, V]> {
    return mapLive(this.#table.entries(), ([name, slot]): [string, V] => [name, slot.value])
  }

  /** Values; live, like `keys()`. */
  values(): IterableIterator<V> {
    return mapLive(this.#table.values(), (slot) => slot.value)
  }

  /** Calls `visit` in insertion order without building an array. */
  forEach(visit: (value: V, name: string) => void): void {
    this.#table.forEach((slot, name) => visit(slot.value, name))
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

/**
 * Anonymous, insertion-ordered, signal-backed entries of one layer, the parallel of `NamedEntries`. Every
 * `append` is its own registration: equal values stay independent, and each undo removes exactly its own.
 */
export class AnonymousEntries<V> {
  // Keyed by each append's own undo, so equal values never collide.
  readonly #table = new SignalTable<Undo, V>()

  /** Adds `value` at the end; the returned undo is idempotent and removes only this append. */
  append(value: V): Undo {
    const undo = (): void => void this.#table.delete(undo)
    this.#table.set(undo, value)
    return undo
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
