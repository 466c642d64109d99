import { describe, expect, test } from 'vitest'
import { diffTexts } from '../../src/cli/text-diff.js'

describe('diffTexts', () => {
  test('a changed word inside one line: the removed and added line, each with the whole changed word marked', () => {
    const before = 'Environment: git branch main, working directory /work.'
    const after = 'Environment: git branch feature/login, working directory /work.'
    expect(diffTexts(before, after)).toEqual([
      { kind: 'removed', text: before, mark: [24, 28] },
      { kind: 'added', text: after, mark: [24, 37] },
    ])
    expect(after.slice(24, 37)).toBe('feature/login')
  })

  test('a section that left the prompt is all removed lines; one that entered, all added', () => {
    expect(diffTexts('a\nb', undefined)).toEqual([
      { kind: 'removed', text: 'a' },
      { kind: 'removed', text: 'b' },
    ])
    expect(diffTexts(undefined, 'c')).toEqual([{ kind: 'added', text: 'c' }])
  })

  test('unchanged lines beyond two of context fold into a gap', () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}`)
    const after = [...lines]
    after[5] = 'line five'
    expect(diffTexts(lines.join('\n'), after.join('\n'))).toEqual([
      { kind: 'gap', lines: 3 },
      { kind: 'same', text: 'line 3' },
      { kind: 'same', text: 'line 4' },
      { kind: 'removed', text: 'line 5', mark: [5, 6] },
      { kind: 'added', text: 'line five', mark: [5, 9] },
      { kind: 'same', text: 'line 6' },
      { kind: 'same', text: 'line 7' },
      { kind: 'gap', lines: 2 },
    ])
  })

  test('an inserted line between kept ones is one added line (a longest common subsequence, not a positional compare)', () => {
    expect(diffTexts('a\nb\nc\nd', 'a\nb\nX\nc\nd').filter((line) => line.kind !== 'same' && line.kind !== 'gap')).toEqual([{ kind: 'added', text: 'X' }])
    expect(diffTexts('a\nX\nb\nY\nc', 'a\nb\nc').filter((line) => line.kind === 'removed')).toEqual([
      { kind: 'removed', text: 'X' },
      { kind: 'removed', text: 'Y' },
    ])
  })

  test('a mark never starts or ends inside a surrogate pair (emoji sharing a high or a low surrogate)', () => {
    // 🟢 is U+1F7E2 (\ud83d\udfe2) and 🔴 U+1F534 (\ud83d\udd34): the common prefix ends between the halves.
    expect(diffTexts('status: 🟢 green', 'status: 🔴 green')).toEqual([
      { kind: 'removed', text: 'status: 🟢 green', mark: [8, 10] },
      { kind: 'added', text: 'status: 🔴 green', mark: [8, 10] },
    ])
    // U+1F300 (\ud83c\udf00) and U+1F700 (\ud83d\udf00): the common suffix starts between the halves.
    expect(diffTexts('x \u{1F300} y', 'x \u{1F700} y')).toEqual([
      { kind: 'removed', text: 'x \u{1F300} y', mark: [2, 4] },
      { kind: 'added', text: 'x \u{1F700} y', mark: [2, 4] },
    ])
  })

  test('texts too long for the line table still diff: the changed middle whole', () => {
    const before = Array.from({ length: 600 }, (_, i) => `b${i}`).join('\n')
    const after = Array.from({ length: 600 }, (_, i) => `a${i}`).join('\n')
    const lines = diffTexts(`head\n${before}\ntail`, `head\n${after}\ntail`)
    expect(lines.filter((line) => line.kind === 'removed')).toHaveLength(600)
    expect(lines.filter((line) => line.kind === 'added')).toHaveLength(600)
    expect(lines[0]).toEqual({ kind: 'same', text: 'head' })
  })
})
