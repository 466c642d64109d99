import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { utf8Length as utf8ByteLength } from '../../src/render/utf8.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 500)

// One UTF-16 code unit of any value (so lone surrogates, and pairs formed by
// chance), or one supplementary code point (a well-formed pair), or a
// boundary character of each UTF-8 length.
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((code) => String.fromCodePoint(code)),
  fc.constantFrom('\u007f', '\u0080', '\u07ff', '\u0800', '\ud7ff', '\ud800', '\udbff', '\udc00', '\udfff', '\ue000', '\uffff'),
)
const text = fc.string({ unit, maxLength: 40 })

describe('utf8ByteLength', () => {
  it('equals Buffer.byteLength for any string, lone surrogates included', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(utf8ByteLength(s)).toBe(Buffer.byteLength(s))
      }),
      { numRuns },
    )
  })

  it('counts a range in place as Buffer.byteLength counts the slice (a range may split a pair)', () => {
    fc.assert(
      fc.property(text, fc.nat(), fc.nat(), (s, a, b) => {
        const start = a % (s.length + 1)
        const end = start + (b % (s.length - start + 1))
        expect(utf8ByteLength(s, start, end)).toBe(Buffer.byteLength(s.slice(start, end)))
      }),
      { numRuns },
    )
  })

  it('counts 1, 2, 3 and 4 bytes by code point, and 3 for each lone surrogate', () => {
    expect(['a', 'é', '€', '😀', '\ud83d', '\ude00', '\ude00\ud83d'].map((s) => utf8ByteLength(s))).toEqual([1, 2, 3, 4, 3, 3, 6])
  })
})
