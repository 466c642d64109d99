import { describe, expect, test } from 'vitest'
import { compileTemplate } from '../../src/assembly/template.js'
import { ReferenceCounts } from '../../src/render/reference-counts.js'

const t = (text: string) => compileTemplate(text, 'prompt section "t"')
const sorted = (counts: ReferenceCounts) => [...counts.names()].sort()

describe('ReferenceCounts', () => {
  test('a recount keeps the names of kept slots, adds the new slots\' and drops a name only when its last reference goes', () => {
    const a = t('{{x}}')
    const b = t('{{y}} {{x}}')
    const c = t('{{z}}')
    const counts = ReferenceCounts.of([a, undefined, b])
    expect(sorted(counts)).toEqual(['x', 'y'])
    // b removed, a kept, c new: y has no reference left, x still has a's.
    counts.recount(Int32Array.from([0, -1]), [a, undefined, b], [a, c])
    expect(sorted(counts)).toEqual(['x', 'z'])
    counts.move(c, undefined)
    expect(sorted(counts)).toEqual(['x'])
  })

  test('two items kept from one old slot (one name twice) count the second as new, so a later removal leaves the name', () => {
    const a = t('{{x}}')
    const counts = ReferenceCounts.of([a])
    counts.recount(Int32Array.from([0, 0]), [a], [a, a])
    counts.recount(Int32Array.from([0]), [a, a], [a])
    expect(sorted(counts)).toEqual(['x'])
  })
})
