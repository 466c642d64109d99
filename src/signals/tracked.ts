import { effect, signal, Signal, type ReadonlySignal } from '@preact/signals-core'

// Every copy of @preact/signals-core brands its signals with this registered symbol.
const BRAND = Symbol.for('preact-signals')

/** Whether `value` is a signal (plain or computed) of the `@preact/signals-core` copy promptloom tracks; another copy's is not. */
export function isReadonlySignal(value: unknown): value is ReadonlySignal<unknown> {
  return value instanceof Signal
}

/** `value` when it is a trackable signal, `undefined` for no signal; a `TypeError` for another copy's signal. */
export function trackedSignalOf(value: unknown, subject: () => string): ReadonlySignal<unknown> | undefined {
  if (value instanceof Signal) return value
  if (typeof value !== 'object' || value === null || (value as { brand?: unknown }).brand !== BRAND) return undefined
  throw new TypeError(
    `${subject()} is a signal of another copy of @preact/signals-core than the one promptloom uses, so promptloom would never see its writes (no system-prompt/change, a stale prompt); ` +
      `import signal and computed from 'promptloom', or dedupe @preact/signals-core so the app has one copy ` +
      `(npm ls @preact/signals-core; a CommonJS require('@preact/signals-core') beside ESM imports loads a second copy)`,
  )
}

/** Owns disposable side effects as a Cordis context or fiber does (structural, so this folder needs no Cordis). */
export interface EffectOwner {
  /** Runs `execute` now and returns a disposer that calls the cleanup it returned. */
  effect(execute: () => () => void, label?: string): () => unknown
}

/** Starts a signal `effect` disposed when `owner` unloads or the returned disposer (the owner's exact one) is called. */
export function ownedEffect(owner: EffectOwner, fn: () => void | (() => void), label = 'signal effect'): () => unknown {
  return owner.effect(() => effect(fn), label)
}

/**
 * Moves one `pulse` signal whenever any of a changing set of sources gets a new value. One small effect per source, so
 * adding a source is O(1) and a write re-runs only its own relay; an effect reading `pulse` runs once per `batch()`.
 *
 *     source a ─▶ relay a ─┐
 *     source b ─▶ relay b ─┼─▶ pulse ─▶ the one effect that reads it
 *     source c ─▶ relay c ─┘
 */
export class ChangeRelay {
  readonly #pulse = signal(0)
  readonly #watches = new Map<ReadonlySignal<unknown>, { count: number; readonly stop: () => void }>()
  /** Moves after every new value of a watched source; read it in the effect that reacts. */
  readonly pulse: ReadonlySignal<number> = this.#pulse

  /** Watches `source` once more (each `add` needs its own `delete`); does not move `pulse` for the first read. */
  add(source: ReadonlySignal<unknown>): void {
    const watch = this.#watches.get(source)
    if (watch !== undefined) {
      watch.count++
      return
    }
    // The first run only subscribes: it happens inside `effect()`, before `stop` is assigned.
    let stop: (() => void) | undefined
    stop = effect(() => {
      try {
        source.value
      } catch {
        // A source whose derivation throws still changed; the error is the reader's, not the writer's.
      }
      if (stop !== undefined) this.#pulse.value = this.#pulse.peek() + 1
    })
    this.#watches.set(source, { count: 1, stop })
  }

  /** Undoes one `add` of `source`; the last one stops its relay. Unknown sources are ignored. */
  delete(source: ReadonlySignal<unknown>): void {
    const watch = this.#watches.get(source)
    if (watch === undefined || --watch.count > 0) return
    this.#watches.delete(source)
    watch.stop()
  }

  /** Stops every relay; later `delete`s are no-ops. */
  clear(): void {
    for (const watch of this.#watches.values()) watch.stop()
    this.#watches.clear()
  }
}
