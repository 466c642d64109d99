// A leaf module: promptloom/otel hashes part texts with it without loading the request builders.

const PRIME_LOW = 0x1b3 // the FNV prime 0x100000001b3 is 2^40 + 0x1b3

/**
 * 64-bit FNV-1a of `bytes` as 16 hex digits, synchronous (Web Crypto's digest is async) and without Node built-ins; it only
 * routes cache keys and fingerprints texts. Four 16-bit limbs keep products exact: h · prime = h · 0x1b3 + (h << 40), and
 * h << 40 adds h0 << 8 to limb 2 and h1 << 8 to limb 3.
 */
export function fnv1a64(bytes: Uint8Array): string {
  let [h3, h2, h1, h0] = [0xcbf2, 0x9ce4, 0x8422, 0x2325] // the FNV offset basis 0xcbf29ce484222325
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i]!
    const t0 = h0 * PRIME_LOW
    const t1 = h1 * PRIME_LOW + (t0 >>> 16)
    const t2 = h2 * PRIME_LOW + (h0 << 8) + (t1 >>> 16)
    h3 = (h3 * PRIME_LOW + (h1 << 8) + (t2 >>> 16)) & 0xffff
    h0 = t0 & 0xffff
    h1 = t1 & 0xffff
    h2 = t2 & 0xffff
  }
  return [h3, h2, h1, h0].map((limb) => limb.toString(16).padStart(4, '0')).join('')
}
