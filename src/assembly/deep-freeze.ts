/**
 * Freezes `value` and everything reachable through own properties (symbols included), in place, and
 * returns it. An object already frozen is taken as frozen all the way down, so shared subtrees are walked once.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key])
  }
  return value
}
