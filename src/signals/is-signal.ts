import { Signal, type ReadonlySignal } from '@preact/signals-core'

// Every copy of @preact/signals-core brands its signals with this registered symbol.
const BRAND = Symbol.for('preact-signals')

/** Whether `value` is a signal (plain or computed) of the `@preact/signals-core` copy promptloom tracks; another copy's is not. */
export function isReadonlySignal(value: unknown): value is ReadonlySignal<unknown> {
  return value instanceof Signal
}

/**
 * `value` when it is a signal promptloom can track, `undefined` when it is no
 * signal. Throws a `TypeError` naming `subject` when it is a signal of another
 * copy of the library, whose writes promptloom would never see.
 */
export function trackedSignalOf(value: unknown, subject: () => string): ReadonlySignal<unknown> | undefined {
  if (value instanceof Signal) return value
  if (typeof value !== 'object' || value === null || (value as { brand?: unknown }).brand !== BRAND) return undefined
  throw new TypeError(
    `${subject()} is a signal of another copy of @preact/signals-core than the one promptloom uses, so promptloom would never see its writes (no system-prompt/change, a stale prompt); ` +
      `import signal and computed from 'promptloom', or dedupe @preact/signals-core so the app has one copy ` +
      `(npm ls @preact/signals-core; a CommonJS require('@preact/signals-core') beside ESM imports loads a second copy)`,
  )
}
