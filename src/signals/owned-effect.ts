import { effect } from '@preact/signals-core'

/**
 * Anything that can own a disposable side effect the way a Cordis context or
 * fiber does: `effect(execute, label)` runs `execute` now and calls the
 * disposer it returns when the owner unloads (or when the returned disposer is
 * called). Kept structural so this folder stays free of Cordis.
 */
export interface EffectOwner {
  /** Runs `execute` now and returns a disposer that calls the cleanup it returned. */
  effect(execute: () => () => void, label?: string): () => unknown
}

/**
 * Starts a signal `effect` whose lifetime is tied to `owner`: it is disposed
 * when the owner unloads or when the returned disposer is called, whichever
 * comes first. Returns the owner's exact disposer.
 */
export function ownedEffect(
  owner: EffectOwner,
  fn: () => void | (() => void),
  label = 'signal effect',
): () => unknown {
  return owner.effect(() => effect(fn), label)
}
