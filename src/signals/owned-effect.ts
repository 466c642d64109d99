import { effect } from '@preact/signals-core'

/** Owns disposable side effects as a Cordis context or fiber does (structural, so this folder needs no Cordis). */
export interface EffectOwner {
  /** Runs `execute` now and returns a disposer that calls the cleanup it returned. */
  effect(execute: () => () => void, label?: string): () => unknown
}

/** Starts a signal `effect` disposed when `owner` unloads or the returned disposer (the owner's exact one) is called. */
export function ownedEffect(owner: EffectOwner, fn: () => void | (() => void), label = 'signal effect'): () => unknown {
  return owner.effect(() => effect(fn), label)
}
