/**
 * A private-field slot that can be stamped onto any object the engine made:
 * what a `WeakMap` keyed by that object gives (one value per exact object,
 * gone with it), without the map. The value is invisible to reflection
 * (`Reflect.ownKeys`, spread, `structuredClone`, JSON), unreachable through a
 * proxy of the object or an object inheriting from it, and costs the garbage
 * collector nothing beyond a property: no ephemeron table to process, which
 * for short-lived keys (a step's results) is most of a WeakMap's cost.
 *
 * The mechanism is plain ES2022: a base constructor that returns the object
 * it is given makes a derived class initialize its private field on that
 * object. Stamp only objects the engine created (never a caller's).
 */

/** One private slot: `set` stamps or re-stamps a value, `get` reads it back. */
export interface PrivateSlot<V> {
  /** Stamps `value` onto `target`, replacing an earlier value (as `WeakMap.set`). */
  set(target: object, value: V): void
  /** The value stamped onto exactly `target`; `undefined` for anything else, primitives included. */
  get(target: unknown): V | undefined
}

class Passthrough {
  constructor(target: object) {
    return target
  }
}

/** A fresh slot: its own private name, so no two slots see each other's values. */
export function privateSlot<V>(): PrivateSlot<V> {
  class Slot extends Passthrough {
    #value: V

    constructor(target: object, value: V) {
      super(target)
      this.#value = value
    }

    static set(target: object, value: V): void {
      if (#value in target) (target as Slot).#value = value
      else new Slot(target, value)
    }

    static get(target: unknown): V | undefined {
      return Object(target) === target && #value in (target as object) ? (target as Slot).#value : undefined
    }
  }
  return { set: Slot.set, get: Slot.get }
}
