/**
 * The OpenAI `prompt_cache_key` (SPEC §4.3). Its digest is 64-bit FNV-1a, written here: synchronous (Web Crypto's is async), no
 * Node built-in (the package root runs anywhere); the key only routes requests, so a non-cryptographic hash will do.
 */

import { describeValue } from '../assembly/errors.js'
import type { ToolSchema } from '../assembly/types.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'

const PROMPT_CACHE_KEY_MAX_LENGTH = 64

/** The FNV prime 0x100000001b3 is 2^40 + 0x1b3. */
const PRIME_LOW = 0x1b3

/**
 * 64-bit FNV-1a of `bytes` as 16 hex digits, on four 16-bit limbs (h3 h2 h1 h0) so every product
 * and carry stays a small integer:
 *
 *   h · prime = h · 0x1b3 + (h << 40)      (h << 40 adds h0 << 8 to limb 2 and h1 << 8 to limb 3)
 */
export function fnv1a64(bytes: Uint8Array): string {
  let h0 = 0x2325
  let h1 = 0x8422
  let h2 = 0x9ce4
  let h3 = 0xcbf2
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

/** `'pl-'` + the digest of the tools (names, descriptions, parameters, in order) and the blocks before the first volatile one. */
function derivedCacheKey(tools: readonly ToolSchema[], rendered: RenderedPrompt): string {
  const declared = JSON.stringify(tools.map((tool) => [tool.name, tool.description, tool.parameters]))
  const volatile = rendered.blocks.findIndex((block) => block.stability === 'volatile')
  const stableRun = rendered.blocks.slice(0, volatile === -1 ? undefined : volatile).map((block) => block.text).join('\n\n')
  return `pl-${fnv1a64(new TextEncoder().encode(`${declared}\u0000${stableRun}`))}`
}

/** Resolves the `promptCacheKey` option of the builder `fn`: `undefined` for none; throws a `TypeError` naming it. */
export function promptCacheKeyOf(fn: string, option: unknown, tools: readonly ToolSchema[], rendered: RenderedPrompt): string | undefined {
  if (option === undefined) return undefined
  if (option === true) return derivedCacheKey(tools, rendered)
  if (typeof option === 'string' && option !== '' && option.length <= PROMPT_CACHE_KEY_MAX_LENGTH) return option
  throw new TypeError(
    `${fn} option "promptCacheKey" must be true (derive it from the tools and the stable prompt) or a non-empty string of at most ${PROMPT_CACHE_KEY_MAX_LENGTH} characters (got ${typeof option === 'string' ? `a string of ${option.length} characters` : describeValue(option)})`,
  )
}
