/**
 * The state behind the shared accessors of objects the engine hands out
 * (an `assemble()` result's deferred `sections`, a `RenderedPrompt`'s lazy
 * fields, a cache block's text): one getter per accessor for every object of
 * a kind, so they all share one hidden class, and each object's own state in
 * a non-enumerable symbol-keyed own property (spread, JSON,
 * `structuredClone` and `Object.keys` never see it), read through the
 * receiver, so a proxy around such an object or an object inheriting from
 * one reads the object's own state.
 */
export interface HiddenState<S> {
  readonly key: symbol
  /**
   * Puts `state` on `target`, which must be a fresh empty object: call it
   * before defining anything else on it. Its own key then starts the object's
   * map chain apart from every other object's; a `text` accessor defined
   * first on the plain empty map, where another kind had already put one with
   * another getter, left every object of the second kind in dictionary mode
   * (test/render/hidden-classes.test.ts).
   */
  attach(target: object, state: S): void
  /** The state of `receiver` (an accessor's `this`), or `undefined`. */
  peek(receiver: unknown): S | undefined
  /** The state of `receiver`; a `TypeError` with `misuse` for anything else. */
  of(receiver: unknown): S
}

/** A hidden state slot; `description` names its symbol, `misuse` is the error for an unrelated receiver. */
export function hiddenState<S>(description: string, misuse: string): HiddenState<S> {
  const key = Symbol(description)
  const peek = (receiver: unknown): S | undefined =>
    typeof receiver === 'object' && receiver !== null ? (receiver as Record<symbol, S | undefined>)[key] : undefined
  return {
    key,
    attach(target, state) {
      Object.defineProperty(target, key, { value: state })
    },
    peek,
    of(receiver) {
      const state = peek(receiver)
      if (state === undefined) throw new TypeError(misuse)
      return state
    },
  }
}
