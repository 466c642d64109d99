/**
 * Usage readers (SPEC §4.2): a provider response's `usage` in the shape
 * `surface.observeUsage` takes, so predicted and observed cache reuse can be
 * compared step by step.
 */

import type { ObservedUsage } from '../surface/step-surface.js'
import { describe } from './request-input.js'

/** The Messages API's `usage` (the SDK's `Usage` fits). */
export type AnthropicUsageLike = {
  /** Input tokens neither read from nor written to the prompt cache (the uncached rest). */
  readonly input_tokens: number
  /** Input tokens read from the prompt cache; missing or `null` counts 0. */
  readonly cache_read_input_tokens?: number | null
  /** Input tokens written to the prompt cache; missing or `null` counts 0. */
  readonly cache_creation_input_tokens?: number | null
}

/** Chat Completions' `usage` (the SDK's `CompletionUsage` fits). */
export type OpenAIChatUsageLike = {
  /** All prompt tokens, the cached ones included. */
  readonly prompt_tokens: number
  /** The breakdown of `prompt_tokens`; may be missing or `null`. */
  readonly prompt_tokens_details?: {
    /** Prompt tokens read from the prompt cache; missing or `null` counts 0. */
    readonly cached_tokens?: number | null
  } | null
}

/** The Responses API's `usage` (the SDK's `ResponseUsage` fits). */
export type OpenAIResponsesUsageLike = {
  /** All input tokens, the cached ones included. */
  readonly input_tokens: number
  /** The breakdown of `input_tokens`; may be missing or `null`. */
  readonly input_tokens_details?: {
    /** Input tokens read from the prompt cache; missing or `null` counts 0. */
    readonly cached_tokens?: number | null
  } | null
}

function count(reader: string, field: string, value: unknown, optional: boolean): number {
  if (optional && value == null) return 0
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  throw new TypeError(`${reader}: usage field "${field}" must be a non-negative number (got ${describe(value)}); pass the response's usage object`)
}

function requireObject(reader: string, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) {
    throw new TypeError(`${reader} expects the response's usage object (got ${describe(usage)})`)
  }
}

/**
 * Anthropic: every prompt token is `input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens` (Anthropic's `input_tokens` counts only the
 * uncached rest); cached = the cache reads; written = the cache creations.
 * Missing or `null` cache fields count 0. Throws a `TypeError` naming a bad field.
 */
export function usageFromAnthropic(usage: AnthropicUsageLike): Required<ObservedUsage> {
  requireObject('usageFromAnthropic', usage)
  const input = count('usageFromAnthropic', 'input_tokens', usage.input_tokens, false)
  const read = count('usageFromAnthropic', 'cache_read_input_tokens', usage.cache_read_input_tokens, true)
  const written = count('usageFromAnthropic', 'cache_creation_input_tokens', usage.cache_creation_input_tokens, true)
  return { inputTokens: input + read + written, cachedInputTokens: read, cacheWriteTokens: written }
}

/**
 * OpenAI: Chat Completions' `prompt_tokens` / `prompt_tokens_details.cached_tokens`,
 * or the Responses API's `input_tokens` / `input_tokens_details.cached_tokens`
 * (OpenAI's prompt count already includes the cached tokens). A missing
 * cached count is 0. Throws a `TypeError` naming a bad field.
 */
export function usageFromOpenAI(usage: OpenAIChatUsageLike | OpenAIResponsesUsageLike): ObservedUsage {
  requireObject('usageFromOpenAI', usage)
  if ('prompt_tokens' in usage) {
    return {
      inputTokens: count('usageFromOpenAI', 'prompt_tokens', usage.prompt_tokens, false),
      cachedInputTokens: count('usageFromOpenAI', 'prompt_tokens_details.cached_tokens', usage.prompt_tokens_details?.cached_tokens, true),
    }
  }
  return {
    inputTokens: count('usageFromOpenAI', 'input_tokens', (usage as OpenAIResponsesUsageLike).input_tokens, false),
    cachedInputTokens: count('usageFromOpenAI', 'input_tokens_details.cached_tokens', (usage as OpenAIResponsesUsageLike).input_tokens_details?.cached_tokens, true),
  }
}
