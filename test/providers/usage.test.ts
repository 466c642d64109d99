import { describe, expect, test } from 'vitest'
import { usageFromAISDK, usageFromAnthropic, usageFromDeepSeek, usageFromOpenAI } from '../../src/index.js'

describe('usageFromAnthropic', () => {
  test('input is input + cache reads + cache writes; cached is the reads; written is the creations', () => {
    expect(usageFromAnthropic({ input_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 300 })).toEqual({
      inputTokens: 1320,
      cachedInputTokens: 1000,
      cacheWriteTokens: 300,
    })
  })

  test('null or missing cache fields count 0', () => {
    expect(usageFromAnthropic({ input_tokens: 20, cache_read_input_tokens: null })).toEqual({ inputTokens: 20, cachedInputTokens: 0, cacheWriteTokens: 0 })
  })

  test('a missing input_tokens or a non-object is a TypeError naming the field', () => {
    expect(() => usageFromAnthropic({} as never)).toThrow(/usage field "input_tokens" must be a non-negative number/)
    expect(() => usageFromAnthropic(undefined as never)).toThrow(/usageFromAnthropic expects the response's usage object/)
  })
})

describe('usageFromOpenAI', () => {
  test('chat usage: prompt_tokens in, prompt_tokens_details.cached_tokens cached', () => {
    expect(usageFromOpenAI({ prompt_tokens: 1500, prompt_tokens_details: { cached_tokens: 1024 } })).toEqual({ inputTokens: 1500, cachedInputTokens: 1024 })
  })

  test('responses usage: input_tokens in, input_tokens_details.cached_tokens cached', () => {
    expect(usageFromOpenAI({ input_tokens: 900, input_tokens_details: { cached_tokens: 512 } })).toEqual({ inputTokens: 900, cachedInputTokens: 512 })
  })

  test('missing details count 0 cached', () => {
    expect(usageFromOpenAI({ prompt_tokens: 10 })).toEqual({ inputTokens: 10, cachedInputTokens: 0 })
  })

  test('a negative count is a TypeError naming the field', () => {
    expect(() => usageFromOpenAI({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: -1 } })).toThrow(/"prompt_tokens_details.cached_tokens"/)
  })
})

describe('usageFromAnthropic: the 5m/1h write split', () => {
  test('cache_creation splits the writes into cacheWrite5mTokens and cacheWrite1hTokens', () => {
    expect(
      usageFromAnthropic({ input_tokens: 50, cache_read_input_tokens: 1800, cache_creation_input_tokens: 248, cache_creation: { ephemeral_5m_input_tokens: 148, ephemeral_1h_input_tokens: 100 } }),
    ).toEqual({ inputTokens: 2098, cachedInputTokens: 1800, cacheWriteTokens: 248, cacheWrite5mTokens: 148, cacheWrite1hTokens: 100 })
  })

  test('a split that disagrees with cache_creation_input_tokens, or a negative part, is a TypeError naming the field', () => {
    expect(() => usageFromAnthropic({ input_tokens: 1, cache_creation_input_tokens: 10, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 3 } })).toThrow(
      /usage field "cache_creation" splits 6 written tokens but "cache_creation_input_tokens" is 10/,
    )
    expect(() => usageFromAnthropic({ input_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: -1 } })).toThrow(/"cache_creation.ephemeral_5m_input_tokens" must be a non-negative number \(got number -1\)/)
    expect(() => usageFromAnthropic({ input_tokens: '5' as never })).toThrow(/"input_tokens" must be a non-negative number \(got string "5"\)/)
  })
})

describe('usageFromOpenAI: writes and validation', () => {
  test('cache_write_tokens is read as cacheWriteTokens (chat and responses)', () => {
    expect(usageFromOpenAI({ prompt_tokens: 2000, prompt_tokens_details: { cached_tokens: 1024, cache_write_tokens: 900 } })).toEqual({ inputTokens: 2000, cachedInputTokens: 1024, cacheWriteTokens: 900 })
    expect(usageFromOpenAI({ input_tokens: 2000, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 1920 } })).toEqual({ inputTokens: 2000, cachedInputTokens: 0, cacheWriteTokens: 1920 })
  })

  test('more cached than prompt tokens is a TypeError naming both fields; a missing count names it without "undefined undefined"', () => {
    expect(() => usageFromOpenAI({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 11 } })).toThrow(/"prompt_tokens_details.cached_tokens" \(11\) exceeds "prompt_tokens" \(10\)/)
    expect(() => usageFromOpenAI({} as never)).toThrow(/usage field "input_tokens" must be a non-negative number \(got undefined\)/)
  })
})

describe('usageFromDeepSeek', () => {
  test('prompt_tokens in, prompt_cache_hit_tokens cached', () => {
    expect(usageFromDeepSeek({ prompt_tokens: 1000, prompt_cache_hit_tokens: 768, prompt_cache_miss_tokens: 232 })).toEqual({ inputTokens: 1000, cachedInputTokens: 768 })
  })

  test('hits and misses that do not add up, hits over the prompt, or a missing hit count are TypeErrors naming the field', () => {
    expect(() => usageFromDeepSeek({ prompt_tokens: 1000, prompt_cache_hit_tokens: 768, prompt_cache_miss_tokens: 100 })).toThrow(/"prompt_cache_hit_tokens" \(768\) and "prompt_cache_miss_tokens" \(100\) must add up to "prompt_tokens" \(1000\)/)
    expect(() => usageFromDeepSeek({ prompt_tokens: 10, prompt_cache_hit_tokens: 64 })).toThrow(/"prompt_cache_hit_tokens" \(64\) exceeds "prompt_tokens" \(10\)/)
    expect(() => usageFromDeepSeek({ prompt_tokens: 10 } as never)).toThrow(/usageFromDeepSeek: usage field "prompt_cache_hit_tokens" must be a non-negative number \(got undefined\)/)
  })
})

describe('usageFromAISDK', () => {
  const usage = (input: number | undefined, read?: number, write?: number, legacy?: number) => ({
    inputTokens: input,
    inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: read, cacheWriteTokens: write },
    outputTokens: 5,
    outputTokenDetails: { textTokens: 5, reasoningTokens: 0 },
    totalTokens: undefined,
    ...(legacy === undefined ? {} : { cachedInputTokens: legacy }),
  })

  test('inputTokens in, inputTokenDetails.cacheReadTokens cached, cacheWriteTokens written', () => {
    expect(usageFromAISDK(usage(3000, 2048, 400))).toEqual({ inputTokens: 3000, cachedInputTokens: 2048, cacheWriteTokens: 400 })
  })

  test('falls back to the older cachedInputTokens; none reported reads 0', () => {
    expect(usageFromAISDK(usage(3000, undefined, undefined, 1024))).toEqual({ inputTokens: 3000, cachedInputTokens: 1024 })
    expect(usageFromAISDK(usage(3000))).toEqual({ inputTokens: 3000, cachedInputTokens: 0 })
  })

  test('an unreported inputTokens, a negative count, or more cached than input is a TypeError naming the field', () => {
    expect(() => usageFromAISDK(usage(undefined, 10))).toThrow(/usageFromAISDK: usage field "inputTokens" must be a non-negative number \(got undefined\)/)
    expect(() => usageFromAISDK(usage(100, -1))).toThrow(/"inputTokenDetails.cacheReadTokens"/)
    expect(() => usageFromAISDK(usage(100, 101))).toThrow(/"inputTokenDetails.cacheReadTokens" \(101\) exceeds "inputTokens" \(100\)/)
    expect(() => usageFromAISDK(usage(100, 60, 60))).toThrow(/exceed "inputTokens" \(100\)/)
  })
})
