/** Usage readers (SPEC §4.2, §4.3): a provider response's `usage` in the shape `surface.observeUsage` takes. */

import { describeValue } from '../assembly/errors.js'
import type { ObservedUsage } from '../surface/step-result.js'

/** The Messages API's `usage` (the SDK's `Usage` fits); missing or `null` cache fields count 0. */
export type AnthropicUsageLike = {
  /** Input tokens neither read from nor written to the prompt cache (the uncached rest). */
  readonly input_tokens: number
  readonly cache_read_input_tokens?: number | null
  readonly cache_creation_input_tokens?: number | null
  readonly cache_creation?: {
    readonly ephemeral_5m_input_tokens?: number | null
    readonly ephemeral_1h_input_tokens?: number | null
  } | null
}

/** Chat Completions' `usage` (the SDK's `CompletionUsage` fits). */
export type OpenAIChatUsageLike = {
  /** All prompt tokens, the cached ones included. */
  readonly prompt_tokens: number
  readonly prompt_tokens_details?: {
    readonly cached_tokens?: number | null
    readonly cache_write_tokens?: number | null
  } | null
}

/** The Responses API's `usage` (the SDK's `ResponseUsage` fits). */
export type OpenAIResponsesUsageLike = {
  /** All input tokens, the cached ones included. */
  readonly input_tokens: number
  readonly input_tokens_details?: OpenAIChatUsageLike['prompt_tokens_details']
}

/** DeepSeek's `usage` (Chat Completions format with its cache fields). */
export type DeepSeekUsageLike = {
  /** All prompt tokens: cache hits plus misses. */
  readonly prompt_tokens: number
  readonly prompt_cache_hit_tokens: number
  readonly prompt_cache_miss_tokens?: number | null
}

/** The AI SDK's `LanguageModelUsage` (from `generateText`'s `usage` or `totalUsage`, one step's or the call's). */
export type AISDKUsageLike = {
  /** All input tokens, cached ones included; `undefined` when the provider reported none. */
  readonly inputTokens: number | undefined
  readonly inputTokenDetails?: {
    readonly cacheReadTokens?: number | undefined
    readonly cacheWriteTokens?: number | undefined
  } | null
  /** The older name of `inputTokenDetails.cacheReadTokens`, read when that is absent. */
  readonly cachedInputTokens?: number | undefined
}

/** `count(field)`, a field as a count (`'outer.inner'`: inside a details object); `optional`: absent or `null` is `undefined`. */
type Counts = { (field: string): number; (field: string, optional: true): number | undefined }

/** The count reader of one usage object; it (and `countsOf` itself, for a non-object) throws a `TypeError` naming `reader`. */
function countsOf(reader: string, usage: unknown): Counts {
  if (typeof usage !== 'object' || usage === null) {
    throw new TypeError(`${reader} expects the response's usage object (got ${describeValue(usage)})`)
  }
  return ((field: string, optional = false): number | undefined => {
    const [outer, inner] = field.split('.') as [string, string?]
    let value = (usage as Record<string, unknown>)[outer]
    if (inner !== undefined && value != null) {
      if (typeof value !== 'object') throw new TypeError(`${reader}: usage field "${outer}" must be an object (got ${describeValue(value)})`)
      value = (value as Record<string, unknown>)[inner]
    }
    if (optional && value == null) return undefined
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
    throw new TypeError(`${reader}: usage field "${field}" must be a non-negative number (got ${describeValue(value)}); pass the response's usage object`)
  }) as Counts
}

function checkCached(reader: string, inputField: string, cachedField: string, input: number, cached: number): void {
  if (cached > input) {
    throw new TypeError(`${reader}: usage field "${cachedField}" (${cached}) exceeds "${inputField}" (${input}); cached tokens are part of the input tokens — pass one response's usage object as it came`)
  }
}

/**
 * Anthropic: in = `input_tokens` (the uncached rest) + cache reads + creations; cached = the reads; written = the creations
 * (0 when absent), split by TTL when `cache_creation` is present (summing to them). Throws a `TypeError` naming a bad field.
 */
export function usageFromAnthropic(usage: AnthropicUsageLike): ObservedUsage & Required<Pick<ObservedUsage, 'cacheWriteTokens'>> {
  const count = countsOf('usageFromAnthropic', usage)
  const input = count('input_tokens')
  const read = count('cache_read_input_tokens', true) ?? 0
  const created = count('cache_creation_input_tokens', true)
  if (usage.cache_creation == null) return { inputTokens: input + read + (created ?? 0), cachedInputTokens: read, cacheWriteTokens: created ?? 0 }
  const fiveMinutes = count('cache_creation.ephemeral_5m_input_tokens', true) ?? 0
  const oneHour = count('cache_creation.ephemeral_1h_input_tokens', true) ?? 0
  const total = fiveMinutes + oneHour
  if (created !== undefined && total !== created) {
    throw new TypeError(
      `usageFromAnthropic: usage field "cache_creation" splits ${total} written tokens but "cache_creation_input_tokens" is ${created}; they must agree — pass one response's usage object as it came`,
    )
  }
  return { inputTokens: input + read + total, cachedInputTokens: read, cacheWriteTokens: total, cacheWrite5mTokens: fiveMinutes, cacheWrite1hTokens: oneHour }
}

/** OpenAI: `prompt_tokens` / `input_tokens` in, their details' `cached_tokens` cached, `cache_write_tokens` written. Throws a `TypeError` naming a field. */
export function usageFromOpenAI(usage: OpenAIChatUsageLike | OpenAIResponsesUsageLike): ObservedUsage {
  const count = countsOf('usageFromOpenAI', usage)
  const inputField = 'prompt_tokens' in usage ? 'prompt_tokens' : 'input_tokens'
  const input = count(inputField)
  const cached = count(`${inputField}_details.cached_tokens`, true) ?? 0
  const written = count(`${inputField}_details.cache_write_tokens`, true)
  checkCached('usageFromOpenAI', inputField, `${inputField}_details.cached_tokens`, input, cached)
  return written === undefined ? { inputTokens: input, cachedInputTokens: cached } : { inputTokens: input, cachedInputTokens: cached, cacheWriteTokens: written }
}

/** DeepSeek: `prompt_tokens` in, `prompt_cache_hit_tokens` cached, misses (when present) the rest. Throws a `TypeError` naming a bad field. */
export function usageFromDeepSeek(usage: DeepSeekUsageLike): ObservedUsage {
  const count = countsOf('usageFromDeepSeek', usage)
  const input = count('prompt_tokens')
  const hit = count('prompt_cache_hit_tokens')
  const miss = count('prompt_cache_miss_tokens', true)
  checkCached('usageFromDeepSeek', 'prompt_tokens', 'prompt_cache_hit_tokens', input, hit)
  if (miss !== undefined && hit + miss !== input) {
    throw new TypeError(
      `usageFromDeepSeek: usage fields "prompt_cache_hit_tokens" (${hit}) and "prompt_cache_miss_tokens" (${miss}) must add up to "prompt_tokens" (${input}); pass one response's usage object as it came`,
    )
  }
  return { inputTokens: input, cachedInputTokens: hit }
}

/**
 * The AI SDK: `inputTokens` in, `inputTokenDetails.cacheReadTokens` (else `cachedInputTokens`) cached, `cacheWriteTokens`
 * written when reported. Throws a `TypeError` naming a bad field, including an `inputTokens` not reported.
 */
export function usageFromAISDK(usage: AISDKUsageLike): ObservedUsage {
  const count = countsOf('usageFromAISDK', usage)
  const input = count('inputTokens')
  const read = count('inputTokenDetails.cacheReadTokens', true)
  const cached = read ?? count('cachedInputTokens', true) ?? 0
  const written = count('inputTokenDetails.cacheWriteTokens', true)
  checkCached('usageFromAISDK', 'inputTokens', read === undefined ? 'cachedInputTokens' : 'inputTokenDetails.cacheReadTokens', input, cached)
  if (written !== undefined && cached + written > input) {
    throw new TypeError(`usageFromAISDK: usage fields "inputTokenDetails.cacheReadTokens" and "inputTokenDetails.cacheWriteTokens" (${cached} + ${written}) exceed "inputTokens" (${input}); pass one usage object as it came`)
  }
  return written === undefined ? { inputTokens: input, cachedInputTokens: cached } : { inputTokens: input, cachedInputTokens: cached, cacheWriteTokens: written }
}
