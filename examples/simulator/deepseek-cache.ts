// DeepSeek context caching on disk, as the documentation describes it ("Context Caching",
// https://api-docs.deepseek.com/guides/kv_cache, and its announcement,
// https://api-docs.deepseek.com/news/news0802): "only requests with identical prefixes (starting from
// the 0th token) will be considered duplicates", the overlap with any earlier request counts as a
// cache hit, and "the cache system uses 64 tokens as a storage unit; content less than 64 tokens will
// not be cached". The prompt is the same token sequence as an OpenAI chat request (tools, then each
// message). Not modelled: the seconds a cache takes to build ("Cache construction takes seconds"), and
// the newer guide's prefix units at request boundaries, which it describes without a unit size.

import { chatUnits, sectionsOf } from './openai-cache.js'
import type { SectionTokens } from './prompt-sections.js'
import { concatTokens, PrefixStore } from './prefix-store.js'
import type { JsonObject, TokenMeter } from './prompt-units.js'
import { badRequest } from './provider-error.js'

/** "The cache system uses 64 tokens as a storage unit." */
export const DEEPSEEK_GRANULARITY = 64

/** "Once the cache is no longer in use, it will be automatically cleared, usually within a few hours to a few days": modelled as 3 hours of disuse. */
const RETENTION_MS = 3 * 60 * 60_000

export interface DeepSeekCacheUsage {
  readonly prompt_tokens: number
  readonly prompt_cache_hit_tokens: number
  readonly prompt_cache_miss_tokens: number
}

/** What `serve` computes for one request: the usage to answer and where the prompt's tokens lie. */
export interface DeepSeekServed {
  readonly usage: DeepSeekCacheUsage
  readonly sections: SectionTokens
}

/** One user's DeepSeek disk cache. `serve` returns the request's hit and miss tokens and stores its prefixes. */
export class DeepSeekCache {
  readonly #store = new PrefixStore(DEEPSEEK_GRANULARITY)

  constructor(private readonly meter: TokenMeter) {}

  serve(body: JsonObject, now: number): DeepSeekServed {
    if (typeof body.model !== 'string') throw badRequest('model: Field required')
    const prompt = chatUnits(body)
    const units = prompt.units.map((unit) => this.meter.tokensOf(unit))
    const tokens = concatTokens(units)
    const steps = this.#store.stepsOf(`deepseek\u0000${body.model}`, tokens)
    const hit = this.#store.longest(steps, now)
    this.#store.store(steps, now + RETENTION_MS)
    return {
      usage: { prompt_tokens: tokens.length, prompt_cache_hit_tokens: hit, prompt_cache_miss_tokens: tokens.length - hit },
      sections: sectionsOf(prompt, units),
    }
  }
}
