import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { AnonymousEntries, NamedEntries, ScopedLayers, type ScopeKey, type ScopeLayer } from '../../src/index.js'
import { counted } from '../assembly/counted.js'

// The scope storage behaves as the original harness's does where its own
// suites look: entry iterators are live, and `peek(undefined)` names no layer.

function named(): NamedEntries<number> {
  return new NamedEntries<number>((name) => new Error(`entry "${name}" is already registered in this scope`))
}

describe('NamedEntries iterators are live, like a Map', () => {
  test('values() yields a value inserted after it was taken', () => {
    const entries = named()
    entries.insert('a', 1)
    const values = entries.values()
    expect(values.next()).toEqual({ value: 1, done: false })
    entries.insert('b', 2)
    expect([...values]).toEqual([2])
  })

  test('keys() and entries() yield a name inserted after they were taken', () => {
    const entries = named()
    entries.insert('a', 1)
    const keys = entries.keys()
    const pairs = entries.entries()
    entries.insert('b', 2)
    expect([[...keys], [...pairs]]).toEqual([['a', 'b'], [['a', 1], ['b', 2]]])
  })

  test('values() skips an entry removed before the iterator reached it', () => {
    const entries = named()
    entries.insert('a', 1)
    const undoB = entries.insert('b', 2)
    entries.insert('c', 3)
    const values = entries.values()
    expect(values.next().value).toBe(1)
    undoB()
    expect([...values]).toEqual([3])
  })

  test('a table that drains starts a new generation: an older iterator yields nothing inserted after', () => {
    const entries = named()
    const undo = entries.insert('first', 1)
    const values = entries.values()
    expect(values.next()).toEqual({ value: 1, done: false })
    undo()
    entries.insert('replacement', 2)
    expect([values.next().done, [...entries.values()]]).toEqual([true, [2]])
  })

  test('calling values() inside a computed subscribes to later insertions', () => {
    const entries = named()
    const view = counted(() => [...entries.values()])
    expect(view.value).toEqual([])
    entries.insert('a', 1)
    expect([view.value, view.runs]).toEqual([[1], 2])
  })
})

describe('AnonymousEntries.values() is live, like a Map', () => {
  test('yields a value appended after it was taken, equal values staying separate', () => {
    const entries = new AnonymousEntries<string>()
    entries.append('same')
    const values = entries.values()
    expect(values.next()).toEqual({ value: 'same', done: false })
    entries.append('same')
    expect([[...values], [...entries.values()]]).toEqual([['same'], ['same', 'same']])
  })

  test('a table that drains starts a new generation: an older iterator yields nothing appended after', () => {
    const entries = new AnonymousEntries<number>()
    const undo = entries.append(1)
    const values = entries.values()
    expect(values.next()).toEqual({ value: 1, done: false })
    undo()
    entries.append(2)
    expect([values.next().done, [...entries.values()]]).toEqual([true, [2]])
  })
})

describe('ScopedLayers.peek(undefined)', () => {
  interface Layer extends ScopeLayer {
    readonly named: NamedEntries<number>
  }

  test('is undefined, also once the global layer holds entries (the global layer is `global`)', () => {
    const layers = new ScopedLayers<Layer>((_scope: ScopeKey | undefined) => {
      const entries = named()
      return { named: entries, isEmpty: () => entries.isEmpty() }
    })
    layers.effect(new Context(), (layer) => layer.named.insert('a', 1), { label: 'test.insert()' })
    expect([layers.peek(undefined), [...layers.global.named.keys()]]).toEqual([undefined, ['a']])
  })
})
