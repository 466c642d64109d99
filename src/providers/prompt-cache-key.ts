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
import { describe } from './request-input.js'

/** The longest `prompt_cache_key` OpenAI accepts. */
export const PROMPT_CACHE_KEY_MAX_LENGTH = 64

const TWO_32 = 4294967296
// 0x100000001b3 = 2^40 + 0x1b3: multiplying by it is a shift by 40 plus a small product.
const PRIME_LOW = 0x1b3

/** 64-bit FNV-1a of `bytes` as 16 hex digits, on two 32-bit halves (every intermediate stays below 2^53, so exact). */
export function fnv1a64(bytes: Uint8Array): string {
  let hi = 0xcbf29ce4
  let lo = 0x84222325
  for (let i = 0; i < bytes.length; i++) {
    lo = (lo ^ bytes[i]!) >>> 0
    const low = lo * PRIME_LOW
    hi = (hi * PRIME_LOW + Math.floor(low / TWO_32) + ((lo << 8) >>> 0)) >>> 0
    lo = low >>> 0
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0')
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
    `${fn} option "promptCacheKey" must be true (derive it from the tools and the stable prompt) or a non-empty string of at most ${PROMPT_CACHE_KEY_MAX_LENGTH} characters (got ${typeof option === 'string' ? `a string of ${option.length} characters` : describe(option)})`,
  )
}
