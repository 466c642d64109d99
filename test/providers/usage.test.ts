import { describe, expect, test } from 'vitest'
import { usageFromAnthropic, usageFromOpenAI } from '../../src/index.js'

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
