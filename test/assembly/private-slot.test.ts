import { describe, expect, test } from 'vitest'
import { privateSlot } from '../../src/assembly/private-slot.js'

describe('privateSlot', () => {
  test('two slots on one object keep separate values', () => {
    const a = privateSlot<number>()
    const b = privateSlot<number>()
    const target = {}
    a.set(target, 1)
    expect(b.get(target)).toBeUndefined()
    b.set(target, 2)
    expect([a.get(target), b.get(target)]).toEqual([1, 2])
  })

  test('stamps arrays and functions without changing what they look like', () => {
    const slot = privateSlot<string>()
    const list = [1, 2]
    const fn = () => 0
    slot.set(list, 'list')
    slot.set(fn, 'fn')
    expect([slot.get(list), slot.get(fn)]).toEqual(['list', 'fn'])
    expect(Array.isArray(list)).toBe(true)
    expect(Reflect.ownKeys(list)).toEqual(['0', '1', 'length'])
    expect(Object.getPrototypeOf(list)).toBe(Array.prototype)
  })

  test('a stamped object keeps its prototype and its keys', () => {
    const slot = privateSlot<string>()
    const target = { a: 1 }
    slot.set(target, 'x')
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype)
    expect(Reflect.ownKeys(target)).toEqual(['a'])
    expect(structuredClone(target)).toEqual({ a: 1 })
  })
})
