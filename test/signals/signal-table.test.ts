import { effect } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { SignalTable } from '../../src/index.js'
import { counted } from '../assembly/counted.js'

describe('SignalTable', () => {
  test('iterates keys, values and entries in insertion order', () => {
    const table = new SignalTable<string, number>()
    table.set('b', 2)
    table.set('a', 1)
    table.set('c', 3)
    expect([...table.keys()]).toEqual(['b', 'a', 'c'])
    expect([...table.values()]).toEqual([2, 1, 3])
    expect([...table.entries()]).toEqual([
      ['b', 2],
      ['a', 1],
      ['c', 3],
    ])
  })

  test('overwriting a present key keeps its position', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    table.set('b', 2)
    table.set('a', 10)
    expect([...table.entries()]).toEqual([
      ['a', 10],
      ['b', 2],
    ])
  })

  test('a deleted and re-inserted key moves to the end', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    table.set('b', 2)
    table.delete('a')
    table.set('a', 3)
    expect([...table.keys()]).toEqual(['b', 'a'])
  })

  test('delete reports whether the key was present', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    expect(table.delete('a')).toBe(true)
    expect(table.delete('a')).toBe(false)
    expect(table.has('a')).toBe(false)
    expect(table.get('a')).toBeUndefined()
  })

  test('forEach visits every entry in insertion order', () => {
    const table = new SignalTable<string, number>()
    table.set('x', 1)
    table.set('y', 2)
    const seen: [string, number][] = []
    table.forEach((value, key) => seen.push([key, value]))
    expect(seen).toEqual([
      ['x', 1],
      ['y', 2],
    ])
  })

  test('size counts the present entries', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    table.set('b', 2)
    table.set('a', 3)
    table.delete('b')
    expect(table.size).toBe(1)
  })

  test('version moves on insertion', () => {
    const table = new SignalTable<string, number>()
    const before = table.version.value
    table.set('a', 1)
    expect(table.version.value).not.toBe(before)
  })

  test('version moves on removal', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const before = table.version.value
    table.delete('a')
    expect(table.version.value).not.toBe(before)
  })

  test('deleting an absent key leaves version alone', () => {
    const table = new SignalTable<string, number>()
    const before = table.version.value
    table.delete('a')
    expect(table.version.value).toBe(before)
  })

  test('version moves on an overwrite with a new value', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const before = table.version.value
    table.set('a', 2)
    expect(table.version.value).not.toBe(before)
  })

  test('an overwrite with an Object.is-equal value leaves version alone', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const before = table.version.value
    table.set('a', 1)
    expect(table.version.value).toBe(before)
  })

  test('peek reads a value without subscribing', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.peek('a'))
    expect(view.value).toBe(1)
    table.set('a', 2)
    table.delete('a')
    expect(view.value).toBe(1)
    expect(view.runs).toBe(1)
  })

  test('a get of a present key recomputes when that key is overwritten', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.get('a'))
    expect(view.value).toBe(1)
    table.set('a', 2)
    expect(view.value).toBe(2)
    expect(view.runs).toBe(2)
  })

  test('a get of a present key does not recompute when another key is written (per-entry granularity)', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    table.set('b', 2)
    const view = counted(() => table.get('a'))
    expect(view.value).toBe(1)
    table.set('b', 20)
    table.set('c', 3)
    table.delete('c')
    expect(view.value).toBe(1)
    expect(view.runs).toBe(1)
  })

  test('a has of a present key does not recompute when another key is inserted', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.has('a'))
    expect(view.value).toBe(true)
    table.set('b', 2)
    expect(view.value).toBe(true)
    expect(view.runs).toBe(1)
  })

  test('a get of a present key recomputes when that key is deleted', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.get('a'))
    expect(view.value).toBe(1)
    table.delete('a')
    expect(view.value).toBeUndefined()
    expect(view.runs).toBe(2)
  })

  test('a has of a present key recomputes when that key is deleted', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.has('a'))
    expect(view.value).toBe(true)
    table.delete('a')
    expect(view.value).toBe(false)
  })

  test('a get of an absent key recomputes when that key is inserted', () => {
    const table = new SignalTable<string, number>()
    const view = counted(() => table.get('a'))
    expect(view.value).toBeUndefined()
    table.set('a', 1)
    expect(view.value).toBe(1)
  })

  test('a has of an absent key recomputes when that key is inserted', () => {
    const table = new SignalTable<string, number>()
    const view = counted(() => table.has('a'))
    expect(view.value).toBe(false)
    table.set('a', 1)
    expect(view.value).toBe(true)
  })

  test('a deleted then re-inserted key is seen by a reader of that key', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.get('a'))
    expect(view.value).toBe(1)
    table.delete('a')
    expect(view.value).toBeUndefined()
    table.set('a', 2)
    expect(view.value).toBe(2)
  })

  test('iteration recomputes on insertion and removal', () => {
    const table = new SignalTable<string, number>()
    const view = counted(() => [...table.keys()])
    expect(view.value).toEqual([])
    table.set('a', 1)
    expect(view.value).toEqual(['a'])
    table.delete('a')
    expect(view.value).toEqual([])
    expect(view.runs).toBe(3)
  })

  test('entries recompute when a value is overwritten', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => [...table.entries()])
    expect(view.value).toEqual([['a', 1]])
    table.set('a', 2)
    expect(view.value).toEqual([['a', 2]])
  })

  test('overwriting with an identical value notifies nobody (Object.is)', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    const view = counted(() => table.get('a'))
    expect(view.value).toBe(1)
    table.set('a', 1)
    expect(view.value).toBe(1)
    expect(view.runs).toBe(1)
  })

  test('an effect that reads an entry and iterates runs once per overwrite (one batch)', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    let runs = 0
    const stop = effect(() => {
      table.get('a')
      ;[...table.values()]
      runs++
    })
    table.set('a', 2)
    stop()
    expect(runs).toBe(2)
  })

  test('an effect that reads an entry and iterates runs once per delete (one batch)', () => {
    const table = new SignalTable<string, number>()
    table.set('a', 1)
    let runs = 0
    const stop = effect(() => {
      table.get('a')
      ;[...table.values()]
      runs++
    })
    table.delete('a')
    stop()
    expect(runs).toBe(2)
  })

  test('a write notifies a subscribed effect synchronously', () => {
    const table = new SignalTable<string, number>()
    const log: (number | undefined)[] = []
    const stop = effect(() => {
      log.push(table.get('a'))
    })
    table.set('a', 1)
    table.set('a', 2)
    table.delete('a')
    stop()
    expect(log).toEqual([undefined, 1, 2, undefined])
  })
})
