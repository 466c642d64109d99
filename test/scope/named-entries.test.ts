import { describe, expect, test } from 'vitest'
import { NamedEntries } from '../../src/index.js'
import { counted } from '../assembly/counted.js'

function sections(): NamedEntries<string> {
  return new NamedEntries<string>(
    (name) => new Error(`prompt section "${name}" is already registered in this scope`),
  )
}

describe('NamedEntries', () => {
  test('reads an inserted value back by name', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')
    expect([entries.get('intro'), entries.has('intro')]).toEqual(['Hello', true])
  })

  test('an absent name reads as undefined and is not had', () => {
    const entries = sections()
    expect([entries.get('intro'), entries.has('intro')]).toEqual([undefined, false])
  })

  test('keys, values and entries follow insertion order', () => {
    const entries = sections()
    entries.insert('b', 'B')
    entries.insert('a', 'A')
    entries.insert('c', 'C')
    expect([...entries.keys()]).toEqual(['b', 'a', 'c'])
    expect([...entries.values()]).toEqual(['B', 'A', 'C'])
    expect([...entries.entries()]).toEqual([
      ['b', 'B'],
      ['a', 'A'],
      ['c', 'C'],
    ])
  })

  test('forEach visits values with their names in insertion order', () => {
    const entries = sections()
    entries.insert('b', 'B')
    entries.insert('a', 'A')
    const seen: string[] = []
    entries.forEach((value, name) => seen.push(`${name}=${value}`))
    expect(seen).toEqual(['b=B', 'a=A'])
  })

  test('isEmpty and size track the entries', () => {
    const entries = sections()
    expect([entries.isEmpty(), entries.size]).toEqual([true, 0])
    const undo = entries.insert('a', 'A')
    expect([entries.isEmpty(), entries.size]).toEqual([false, 1])
    undo()
    expect([entries.isEmpty(), entries.size]).toEqual([true, 0])
  })

  test('a duplicate name throws the error the owner supplied', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')
    expect(() => entries.insert('intro', 'Again')).toThrow(
      'prompt section "intro" is already registered in this scope',
    )
  })

  test('a rejected duplicate changes nothing', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')
    entries.insert('outro', 'Bye')
    expect(() => entries.insert('intro', 'Again')).toThrow(/already registered/)
    expect([...entries.entries()]).toEqual([
      ['intro', 'Hello'],
      ['outro', 'Bye'],
    ])
  })

  test('a rejected duplicate notifies nobody', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')
    const view = counted(() => [...entries.entries()])
    view.value
    expect(() => entries.insert('intro', 'Again')).toThrow(/already registered/)
    view.value
    expect(view.runs).toBe(1)
  })

  test('an undefined value still occupies its name', () => {
    const entries = new NamedEntries<string | undefined>((name) => new Error(`"${name}" taken`))
    entries.insert('intro', undefined)
    expect(entries.has('intro')).toBe(true)
    expect(() => entries.insert('intro', 'Hello')).toThrow('"intro" taken')
  })

  test('undo removes the insertion', () => {
    const entries = sections()
    const undo = entries.insert('intro', 'Hello')
    undo()
    expect([entries.has('intro'), [...entries.keys()]]).toEqual([false, []])
  })

  test('undo removes only its own name', () => {
    const entries = sections()
    entries.insert('a', 'A')
    const undo = entries.insert('b', 'B')
    entries.insert('c', 'C')
    undo()
    expect([...entries.keys()]).toEqual(['a', 'c'])
  })

  test('a second undo is harmless', () => {
    const entries = sections()
    const undo = entries.insert('intro', 'Hello')
    undo()
    undo()
    expect(entries.isEmpty()).toBe(true)
  })

  test('a name frees up for a new insertion after undo', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')()
    entries.insert('intro', 'Again')
    expect(entries.get('intro')).toBe('Again')
  })

  test('a stale undo never removes a later re-insert of the same name', () => {
    const entries = sections()
    const stale = entries.insert('intro', 'Hello')
    stale()
    entries.insert('intro', 'Again')
    stale()
    expect(entries.get('intro')).toBe('Again')
  })

  test('a re-inserted name moves to the end', () => {
    const entries = sections()
    const undo = entries.insert('a', 'A')
    entries.insert('b', 'B')
    undo()
    entries.insert('a', 'A2')
    expect([...entries.keys()]).toEqual(['b', 'a'])
  })

  test('a computed over entries recomputes after an insert', () => {
    const entries = sections()
    const view = counted(() => [...entries.entries()])
    expect(view.value).toEqual([])
    entries.insert('intro', 'Hello')
    expect(view.value).toEqual([['intro', 'Hello']])
    expect(view.runs).toBe(2)
  })

  test('a computed over entries recomputes after an undo', () => {
    const entries = sections()
    const undo = entries.insert('intro', 'Hello')
    const view = counted(() => [...entries.entries()])
    expect(view.value).toEqual([['intro', 'Hello']])
    undo()
    expect(view.value).toEqual([])
  })

  test('a computed over entries does not recompute after a repeated undo', () => {
    const entries = sections()
    const undo = entries.insert('intro', 'Hello')
    undo()
    const view = counted(() => [...entries.entries()])
    view.value
    undo()
    view.value
    expect(view.runs).toBe(1)
  })

  test('a computed over isEmpty recomputes when the first entry arrives', () => {
    const entries = sections()
    const view = counted(() => entries.isEmpty())
    expect(view.value).toBe(true)
    entries.insert('intro', 'Hello')
    expect(view.value).toBe(false)
  })

  test('a computed over get of a present name does not recompute after another name is inserted', () => {
    const entries = sections()
    entries.insert('intro', 'Hello')
    const view = counted(() => entries.get('intro'))
    expect(view.value).toBe('Hello')
    entries.insert('outro', 'Bye')
    expect(view.value).toBe('Hello')
    expect(view.runs).toBe(1)
  })

  test('a computed over has of an absent name recomputes when the name is inserted', () => {
    const entries = sections()
    const view = counted(() => entries.has('intro'))
    expect(view.value).toBe(false)
    entries.insert('intro', 'Hello')
    expect(view.value).toBe(true)
  })
})
