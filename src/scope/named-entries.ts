import { SignalTable } from '../signals/signal-table.js'

/** A removal capability: removes exactly one insertion, once; later calls do nothing. */
export type Undo = () => void

interface Slot<V> {
  readonly value: V
}

/**
 * Named, insertion-ordered, signal-backed entries of one layer: reads subscribe
 * and every insertion or removal notifies. The owner supplies the duplicate
 * error so the message names its own kind of entry.
 */
export class NamedEntries<V> {
  readonly #table = new SignalTable<string, Slot<V>>()
  readonly #duplicateError: (name: string) => Error

  constructor(duplicateError: (name: string) => Error) {
    this.#duplicateError = duplicateError
  }

  /**
   * Adds `value` under `name` at the end; throws the owner's duplicate error
   * (changing nothing) when the name is taken. The returned undo is idempotent
   * and never removes a later re-insert of the same name.
   */
  insert(name: string, value: V): Undo {
    if (this.#table.peek(name) !== undefined) throw this.#duplicateError(name)
    const slot: Slot<V> = { value }
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

  /**
   * A live iterator in insertion order, as a `Map`'s (a drained table starts
   * afresh: an iterator taken before yields nothing inserted after). Calling
   * it subscribes to every insertion and removal; spread it for a snapshot.
   */
  keys(): IterableIterator<string> {
    return this.#table.keys()
  }

  /** `[name, value]` pairs; live, like `keys()`. */
  entries(): IterableIterator<[string, V]> {
    return namedValues(this.#table.entries())
  }

  /** Values; live, like `keys()`. */
  values(): IterableIterator<V> {
    return slotValues(this.#table.values())
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

function* slotValues<V>(slots: IterableIterator<Slot<V>>): Generator<V, undefined> {
  for (const slot of slots) yield slot.value
  return undefined
}

function* namedValues<V>(entries: IterableIterator<[string, Slot<V>]>): Generator<[string, V], undefined> {
  for (const [name, slot] of entries) yield [name, slot.value]
  return undefined
}
