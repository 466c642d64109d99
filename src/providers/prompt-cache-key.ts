/**
 * The OpenAI `prompt_cache_key` promptloom derives (SPEC §4.3): `'pl-'` and
 * a hex digest of the tools and the stable run's text, so agents that share
 * both are routed to the same cache, and a change to a volatile block, the
 * snapshot or the history leaves the key as it is.
 *
 * The digest is 64-bit FNV-1a over the UTF-8 bytes, written here: it must be
 * synchronous (Web Crypto's digest is async), import no Node built-in (the
 * package root runs anywhere) and fit the key's 64 characters. The key only
 * routes requests to a cache, it secures nothing: a collision merely lets two
 * different prefixes share a routing bucket, so a fast non-cryptographic hash
 * is enough, and 64 bits make even that unlikely.
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { ToolSchema } from '../assembly/types.js'
import { describeValue } from '../assembly/errors.js'

/** The longest `prompt_cache_key` OpenAI accepts. */
export const PROMPT_CACHE_KEY_MAX_LENGTH = 64

/** The FNV prime 0x100000001b3 is 2^40 + 0x1b3: multiplying by it is a shift by 40 bits plus a small product. */
const PRIME_LOW = 0x1b3

/**
 * 64-bit FNV-1a of `bytes` as 16 hex digits, on four 16-bit limbs (h3 h2 h1 h0), so every product
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

/** The stable run's text: the blocks before the first volatile one, joined as in the prompt. */
function stableRunText(rendered: RenderedPrompt): string {
  const texts: string[] = []
  for (const block of rendered.blocks) {
    if (block.stability === 'volatile') break
    texts.push(block.text)
  }
  return texts.join('\n\n')
}

/** `'pl-'` + the digest of the tools (names, descriptions, parameters, in order) and the stable run. */
export function derivedCacheKey(tools: readonly ToolSchema[], rendered: RenderedPrompt): string {
  const declared = JSON.stringify(tools.map((tool) => [tool.name, tool.description, tool.parameters]))
  return `pl-${fnv1a64(new TextEncoder().encode(`${declared}\u0000${stableRunText(rendered)}`))}`
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
