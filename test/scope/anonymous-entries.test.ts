import { describe, expect, test } from 'vitest'
import { AnonymousEntries } from '../../src/index.js'
import { counted } from '../assembly/counted.js'

describe('AnonymousEntries', () => {
  test('values follow append order', () => {
    const entries = new AnonymousEntries<string>()
    entries.append('b')
    entries.append('a')
    expect([...entries.values()]).toEqual(['b', 'a'])
  })

  test('forEach visits values with their positions', () => {
    const entries = new AnonymousEntries<string>()
    entries.append('b')
    entries.append('a')
    const seen: string[] = []
    entries.forEach((value, index) => seen.push(`${index}:${value}`))
    expect(seen).toEqual(['0:b', '1:a'])
  })

  test('isEmpty and size track the entries', () => {
    const entries = new AnonymousEntries<string>()
    expect([entries.isEmpty(), entries.size]).toEqual([true, 0])
    const undo = entries.append('a')
    expect([entries.isEmpty(), entries.size]).toEqual([false, 1])
    undo()
    expect([entries.isEmpty(), entries.size]).toEqual([true, 0])
  })

  test('equal values stay independent registrations', () => {
    const entries = new AnonymousEntries<string>()
    entries.append('same')
    entries.append('same')
    expect([...entries.values()]).toEqual(['same', 'same'])
  })

  test('an identical object appended twice stays two registrations', () => {
    const shared = { name: 'suppressor' }
    const entries = new AnonymousEntries<object>()
    entries.append(shared)
    entries.append(shared)
    expect(entries.size).toBe(2)
  })

  test('undo removes exactly its own append among equal values', () => {
    const entries = new AnonymousEntries<{ tag: string }>()
    const value = { tag: 'same' }
    entries.append(value)
    const undoSecond = entries.append(value)
    entries.append({ tag: 'other' })
    undoSecond()
    expect([...entries.values()]).toEqual([{ tag: 'same' }, { tag: 'other' }])
    expect(entries.size).toBe(2)
  })

  test('undo keeps the other equal registration in place', () => {
    const entries = new AnonymousEntries<string>()
    const undoFirst = entries.append('same')
    entries.append('middle')
    entries.append('same')
    undoFirst()
    expect([...entries.values()]).toEqual(['middle', 'same'])
  })

  test('a second undo is harmless', () => {
    const entries = new AnonymousEntries<string>()
    const undo = entries.append('same')
    entries.append('same')
    undo()
    undo()
    expect([...entries.values()]).toEqual(['same'])
  })

  test('a computed over values recomputes after an append', () => {
    const entries = new AnonymousEntries<string>()
    const view = counted(() => [...entries.values()])
    expect(view.value).toEqual([])
    entries.append('a')
    expect(view.value).toEqual(['a'])
  })

  test('a computed over values recomputes after an undo', () => {
    const entries = new AnonymousEntries<string>()
    const undo = entries.append('a')
    const view = counted(() => [...entries.values()])
    expect(view.value).toEqual(['a'])
    undo()
    expect(view.value).toEqual([])
  })

  test('a computed over values does not recompute after a repeated undo', () => {
    const entries = new AnonymousEntries<string>()
    const undo = entries.append('a')
    undo()
    const view = counted(() => [...entries.values()])
    view.value
    undo()
    view.value
    expect(view.runs).toBe(1)
  })

  test('a computed over isEmpty recomputes when the last entry goes', () => {
    const entries = new AnonymousEntries<string>()
    const undo = entries.append('a')
    const view = counted(() => entries.isEmpty())
    expect(view.value).toBe(false)
    undo()
    expect(view.value).toBe(true)
  })
})
