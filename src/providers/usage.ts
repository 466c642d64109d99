/** Usage readers (SPEC §4.2, §4.3): a provider response's `usage` in the shape `surface.observeUsage` takes. */

import { describeValue } from '../assembly/errors.js'
import type { ObservedUsage } from '../surface/usage-record.js'

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
  readonly input_tokens_details?: {
    readonly cached_tokens?: number | null
    readonly cache_write_tokens?: number | null
  } | null
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

/** `value` as a count, or a `TypeError` naming `field`. */
function count(reader: string, field: string, value: unknown, optional: true): number | undefined
function count(reader: string, field: string, value: unknown, optional: false): number
function count(reader: string, field: string, value: unknown, optional: boolean): number | undefined {
  if (optional && value == null) return undefined
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  throw new TypeError(`${reader}: usage field "${field}" must be a non-negative number (got ${describeValue(value)}); pass the response's usage object`)
}

function requireObject(reader: string, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) {
    throw new TypeError(`${reader} expects the response's usage object (got ${describeValue(usage)})`)
  }
}

function details(reader: string, field: string, value: unknown): Record<string, unknown> | undefined {
  if (value == null) return undefined
  if (typeof value !== 'object') throw new TypeError(`${reader}: usage field "${field}" must be an object (got ${describeValue(value)})`)
  return value as Record<string, unknown>
}

function checkCached(reader: string, inputField: string, cachedField: string, input: number, cached: number): void {
  if (cached > input) {
    throw new TypeError(`${reader}: usage field "${cachedField}" (${cached}) exceeds "${inputField}" (${input}); cached tokens are part of the input tokens — pass one response's usage object as it came`)
  }
}

/**
 * Anthropic: in = `input_tokens` (only the uncached rest) + cache reads + cache creations; cached = the reads; written = the
 * creations, split by TTL when `cache_creation` is present (its sum must equal them). Throws a `TypeError` naming a bad field.
 */
export function usageFromAnthropic(usage: AnthropicUsageLike): ObservedUsage & {
  /** The input tokens written to the cache (`cache_creation_input_tokens`; 0 when absent). */
  readonly cacheWriteTokens: number
} {
  const reader = 'usageFromAnthropic'
  requireObject(reader, usage)
  const input = count(reader, 'input_tokens', usage.input_tokens, false)
  const read = count(reader, 'cache_read_input_tokens', usage.cache_read_input_tokens, true) ?? 0
  const created = count(reader, 'cache_creation_input_tokens', usage.cache_creation_input_tokens, true)
  const split = details(reader, 'cache_creation', usage.cache_creation)
  if (split === undefined) return { inputTokens: input + read + (created ?? 0), cachedInputTokens: read, cacheWriteTokens: created ?? 0 }
  const fiveMinutes = count(reader, 'cache_creation.ephemeral_5m_input_tokens', split.ephemeral_5m_input_tokens, true) ?? 0
  const oneHour = count(reader, 'cache_creation.ephemeral_1h_input_tokens', split.ephemeral_1h_input_tokens, true) ?? 0
  if (created !== undefined && fiveMinutes + oneHour !== created) {
    throw new TypeError(
      `${reader}: usage field "cache_creation" splits ${fiveMinutes + oneHour} written tokens but "cache_creation_input_tokens" is ${created}; they must agree — pass one response's usage object as it came`,
    )
  }
  const total = fiveMinutes + oneHour
  return { inputTokens: input + read + total, cachedInputTokens: read, cacheWriteTokens: total, cacheWrite5mTokens: fiveMinutes, cacheWrite1hTokens: oneHour }
}

/** OpenAI: `prompt_tokens` / `input_tokens` in, their details' `cached_tokens` cached, `cache_write_tokens` written. Throws a `TypeError` naming a field. */
export function usageFromOpenAI(usage: OpenAIChatUsageLike | OpenAIResponsesUsageLike): ObservedUsage {
  const reader = 'usageFromOpenAI'
  requireObject(reader, usage)
  const chat = 'prompt_tokens' in usage
  const [inputField, detailsField] = chat ? ['prompt_tokens', 'prompt_tokens_details'] : ['input_tokens', 'input_tokens_details']
  const record = usage as Record<string, unknown>
  const input = count(reader, inputField, record[inputField], false)
  const breakdown = details(reader, detailsField, record[detailsField])
  const cached = count(reader, `${detailsField}.cached_tokens`, breakdown?.cached_tokens, true) ?? 0
  const written = count(reader, `${detailsField}.cache_write_tokens`, breakdown?.cache_write_tokens, true)
  checkCached(reader, inputField, `${detailsField}.cached_tokens`, input, cached)
  return written === undefined ? { inputTokens: input, cachedInputTokens: cached } : { inputTokens: input, cachedInputTokens: cached, cacheWriteTokens: written }
}

/** DeepSeek: `prompt_tokens` in, `prompt_cache_hit_tokens` cached, misses (when present) the rest. Throws a `TypeError` naming a bad field. */
export function usageFromDeepSeek(usage: DeepSeekUsageLike): ObservedUsage {
  const reader = 'usageFromDeepSeek'
  requireObject(reader, usage)
  const input = count(reader, 'prompt_tokens', usage.prompt_tokens, false)
  const hit = count(reader, 'prompt_cache_hit_tokens', usage.prompt_cache_hit_tokens, false)
  const miss = count(reader, 'prompt_cache_miss_tokens', usage.prompt_cache_miss_tokens, true)
  checkCached(reader, 'prompt_tokens', 'prompt_cache_hit_tokens', input, hit)
  if (miss !== undefined && hit + miss !== input) {
    throw new TypeError(
      `${reader}: usage fields "prompt_cache_hit_tokens" (${hit}) and "prompt_cache_miss_tokens" (${miss}) must add up to "prompt_tokens" (${input}); pass one response's usage object as it came`,
    )
  }
  return { inputTokens: input, cachedInputTokens: hit }
}

/**
 * The AI SDK: `inputTokens` in, `inputTokenDetails.cacheReadTokens` (else `cachedInputTokens`) cached, `cacheWriteTokens`
 * written when reported. Throws a `TypeError` naming a bad field, including an `inputTokens` not reported.
 */
export function usageFromAISDK(usage: AISDKUsageLike): ObservedUsage {
  const reader = 'usageFromAISDK'
  requireObject(reader, usage)
  const input = count(reader, 'inputTokens', usage.inputTokens, false)
  const breakdown = details(reader, 'inputTokenDetails', usage.inputTokenDetails)
  const read = count(reader, 'inputTokenDetails.cacheReadTokens', breakdown?.cacheReadTokens, true)
  const cached = read ?? count(reader, 'cachedInputTokens', usage.cachedInputTokens, true) ?? 0
  const written = count(reader, 'inputTokenDetails.cacheWriteTokens', breakdown?.cacheWriteTokens, true)
  checkCached(reader, 'inputTokens', read === undefined ? 'cachedInputTokens' : 'inputTokenDetails.cacheReadTokens', input, cached)
  if (written !== undefined && cached + written > input) {
    throw new TypeError(`${reader}: usage fields "inputTokenDetails.cacheReadTokens" and "inputTokenDetails.cacheWriteTokens" (${cached} + ${written}) exceed "inputTokens" (${input}); pass one usage object as it came`)
  }
  return written === undefined ? { inputTokens: input, cachedInputTokens: cached } : { inputTokens: input, cachedInputTokens: cached, cacheWriteTokens: written }
}
