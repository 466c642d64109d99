import { describe, expect, test } from 'vitest'
import { promptOf } from '../providers/fixtures.js'

const marks = (parts: Parameters<typeof promptOf>[0]) => promptOf(parts).blocks.map((block) => [block.parts.join(' '), block.cacheBreakpoint])

describe('cache blocks: the stable-run breakpoint rule', () => {
  test('a prompt nobody annotated (every section session) is one block cached through its end', () => {
    expect(marks([['a', 'A', 'session'], ['b', 'B', 'session'], ['c', 'C', 'session']])).toEqual([['a b c', true]])
  })

  test('the stable run ends at the first volatile block: its last block is marked, nothing after it is', () => {
    expect(marks([['a', 'A', 'static'], ['b', 'B', 'session'], ['v', 'V', 'volatile'], ['c', 'C', 'session']])).toEqual([
      ['a', false],
      ['b', true],
      ['v', false],
      ['c', false],
    ])
  })

  test('a cacheBreakpoint part inside the stable run ends a marked block; one at or after the first volatile block gets no marker', () => {
    expect(
      marks([
        ['a', 'A', 'static', true],
        ['b', 'B', 'static'],
        ['v', 'V', 'volatile', true],
        ['c', 'C', 'session', true],
        ['d', 'D', 'session'],
      ]),
    ).toEqual([
      ['a', true],
      ['b', true],
      ['v', false],
      ['c', false],
      ['d', false],
    ])
  })

  test('a prompt that starts volatile has no marker at all', () => {
    expect(marks([['v', 'V', 'volatile', true], ['a', 'A', 'static', true]])).toEqual([
      ['v', false],
      ['a', false],
    ])
  })

  test('blocks are frozen plain objects whose text is their parts joined by a blank line', () => {
    const [block] = promptOf([['a', 'A', 'static'], ['b', 'B', 'static', true]]).blocks
    expect(Object.getOwnPropertyDescriptors(block!)).toMatchObject({ text: { value: 'A\n\nB', enumerable: true, writable: false } })
    expect(Object.isFrozen(block) && Object.isFrozen(block!.parts)).toBe(true)
  })
})
