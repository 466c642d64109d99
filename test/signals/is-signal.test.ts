import { computed, signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { isReadonlySignal } from '../../src/index.js'

describe('isReadonlySignal', () => {
  test('accepts a plain signal', () => {
    expect(isReadonlySignal(signal(1))).toBe(true)
  })

  test('accepts a computed', () => {
    expect(isReadonlySignal(computed(() => 1))).toBe(true)
  })

  test('rejects an object carrying the shared preact brand that is no signal of this runtime (see foreign-signal.test.ts)', () => {
    expect(isReadonlySignal({ brand: Symbol.for('preact-signals'), value: 1 })).toBe(false)
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'text'],
    ['a function', () => 'text'],
    ['a plain object with a value', { value: 1 }],
    ['an object with a different brand', { brand: Symbol('preact-signals') }],
  ])('rejects %s', (_label, value) => {
    expect(isReadonlySignal(value)).toBe(false)
  })
})
