import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { fnv1a64 } from '../../src/providers/fnv1a64.js'

// The digest behind promptCacheKey: true, against the published FNV-1a test vectors and a BigInt
// oracle that multiplies by the 64-bit FNV prime directly.

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

function oracle(data: Uint8Array): string {
  let hash = 0xcbf29ce484222325n
  for (const byte of data) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
  return hash.toString(16).padStart(16, '0')
}

describe('fnv1a64', () => {
  test('matches the published 64-bit FNV-1a vectors', () => {
    expect(['', 'a', 'foobar'].map((text) => fnv1a64(bytes(text)))).toEqual(['cbf29ce484222325', 'af63dc4c8601ec8c', '85944171f73967e8'])
  })

  test('equals 64-bit arithmetic on any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (data) => fnv1a64(data) === oracle(data)))
  })
})
