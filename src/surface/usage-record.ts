import { describeValue } from '../assembly/errors.js'

/** What a provider reported about one step's prompt tokens (see `usageFromAnthropic` / `usageFromOpenAI`). */
export interface ObservedUsage {
  /** Every prompt token the provider processed, cached ones included. */
  readonly inputTokens: number
  /** The prompt tokens read from the provider's cache. */
  readonly cachedInputTokens: number
  /** The prompt tokens written to the cache (Anthropic reports them). */
  readonly cacheWriteTokens?: number
  /** Of those, the ones written with Anthropic's 5-minute TTL (when the provider splits them). */
  readonly cacheWrite5mTokens?: number
  /** Of those, the ones written with Anthropic's 1-hour TTL (when the provider splits them). */
  readonly cacheWrite1hTokens?: number
}

/** The record `observeUsage` returns and the session log stores beside its step. */
export interface UsageRecord extends ObservedUsage {
  readonly type: 'usage'
  /** The step the usage belongs to (the latest step taken). */
  readonly step: number
  /** That step's `reusablePrefixTokens`: what promptloom predicted the cache could reuse (only with `countTokens`). */
  readonly predictedTokens?: number
  /** That step's `expectedCachedTokens`: what the provider's rules let it serve from cache (only with `cacheRules`). */
  readonly expectedTokens?: number
}

const READERS = 'usageFromAnthropic, usageFromOpenAI, usageFromDeepSeek or usageFromAISDK'
const CACHE_WRITES = ['cacheWriteTokens', 'cacheWrite5mTokens', 'cacheWrite1hTokens'] as const

/**
 * The usage record of step `step`, with its predicted and expected tokens when it has them. Throws a
 * `TypeError` naming a field that is not a non-negative finite number, or more cached than input tokens.
 */
export function usageRecordOf(usage: ObservedUsage, step: number, predicted: number | undefined, expected: number | undefined): UsageRecord {
  if (typeof usage !== 'object' || usage === null) {
    throw new TypeError(`observeUsage expects { inputTokens, cachedInputTokens, cacheWriteTokens? } (got ${describeValue(usage)})`)
  }
  const inputTokens = tokenCount('inputTokens', usage.inputTokens)
  const cachedInputTokens = tokenCount('cachedInputTokens', usage.cachedInputTokens)
  if (cachedInputTokens > inputTokens) {
    throw new TypeError(
      `observeUsage field "cachedInputTokens" (${cachedInputTokens}) exceeds "inputTokens" (${inputTokens}); cached tokens are part of the input tokens — read the usage with ${READERS}`,
    )
  }
  const writes = CACHE_WRITES.filter((field) => usage[field] !== undefined).map((field) => [field, tokenCount(field, usage[field])])
  return {
    type: 'usage',
    step,
    inputTokens,
    cachedInputTokens,
    ...Object.fromEntries(writes),
    ...(predicted === undefined ? {} : { predictedTokens: predicted }),
    ...(expected === undefined ? {} : { expectedTokens: expected }),
  }
}

function tokenCount(field: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  throw new TypeError(`observeUsage field "${field}" must be a non-negative finite number (got ${describeValue(value)}); read it with ${READERS}`)
}
