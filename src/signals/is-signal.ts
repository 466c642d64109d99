import type { ReadonlySignal } from '@preact/signals-core'

const BRAND = Symbol.for('preact-signals')

/**
 * Whether `value` is a `@preact/signals-core` signal (plain or computed),
 * recognised by the library's own brand so that signals from another copy of
 * the library are accepted too.
 */
export function isReadonlySignal(value: unknown): value is ReadonlySignal<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { brand?: unknown }).brand === BRAND
  )
}
