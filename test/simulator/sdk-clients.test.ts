import { createAnthropic } from '@ai-sdk/anthropic'
import Anthropic from '@anthropic-ai/sdk'
import { generateText } from 'ai'
import OpenAI from 'openai'
import { describe, expect, test } from 'vitest'
import { startSimulator } from '../../examples/simulator/index.js'
import { usageFromAnthropic, usageFromOpenAI } from '../../src/index.js'

// The official SDK clients send to the simulator on 127.0.0.1 and hand back its usage in their own
// objects. Each test starts its own simulator, so no cache carries over from another test.

function filler(tokens: number, word = 'apple'): string {
  return ` ${word}`.repeat(tokens)
}

describe('@anthropic-ai/sdk against the simulator', () => {
  test('messages.create hands back the written, then the read prefix, with the 5m/1h split', async () => {
    const simulator = await startSimulator()
    const client = new Anthropic({ apiKey: 'test-key', baseURL: simulator.baseURL('anthropic'), maxRetries: 0 })
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: filler(1100), cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: filler(100, 'plum'), cache_control: { type: 'ephemeral' } },
    ]
    const first = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [{ role: 'user', content: filler(10, 'pear') }] })
    simulator.advance(6 * 60_000) // the 5m entry expires, the 1h one stays
    const second = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [{ role: 'user', content: filler(10, 'pear') }] })
    await simulator.close()
    expect(first.usage).toMatchObject({
      input_tokens: 10,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 1200,
      cache_creation: { ephemeral_1h_input_tokens: 1100, ephemeral_5m_input_tokens: 100 },
    })
    expect(second.usage).toMatchObject({
      input_tokens: 10,
      cache_read_input_tokens: 1100,
      cache_creation_input_tokens: 100,
      cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 100 },
    })
    expect(usageFromAnthropic(second.usage)).toMatchObject({ inputTokens: 1210, cachedInputTokens: 1100, cacheWriteTokens: 100 })
    expect(simulator.requests.map((exchange) => exchange.body.system)).toEqual([system, system])
  })

  test('the simulated 400 surfaces as the SDK BadRequestError', async () => {
    const simulator = await startSimulator()
    const client = new Anthropic({ apiKey: 'test-key', baseURL: simulator.baseURL('anthropic'), maxRetries: 0 })
    const system: Anthropic.TextBlockParam[] = [1, 2, 3, 4, 5].map((n) => ({ type: 'text', text: `part ${n}`, cache_control: { type: 'ephemeral' } }))
    const error = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught)
    await simulator.close()
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('A maximum of 4 blocks with cache_control may be provided. Found 5.')
  })

  test('a scripted tool call comes back as a tool_use block', async () => {
    const simulator = await startSimulator({ reply: () => ({ tool: { name: 'read', input: { path: 'a.ts' } } }) })
    const client = new Anthropic({ apiKey: 'test-key', baseURL: simulator.baseURL('anthropic'), maxRetries: 0 })
    const message = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'Read a.ts.' }] })
    await simulator.close()
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts' } }])
  })
})

describe('ai + @ai-sdk/anthropic against the simulator', () => {
  test('generateText reports the cache write, then the read, in LanguageModelUsage', async () => {
    const simulator = await startSimulator()
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: simulator.baseURL('openai') })
    const call = () =>
      generateText({
        model: anthropic('claude-sonnet-4-6'),
        maxRetries: 0,
        system: [{ role: 'system', content: filler(1200), providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
        prompt: filler(10, 'pear'),
      })
    const first = await call()
    const second = await call()
    await simulator.close()
    expect(simulator.requests[0]!.body.system).toEqual([{ type: 'text', text: filler(1200), cache_control: { type: 'ephemeral' } }])
    expect(first.usage).toMatchObject({ inputTokens: 1210, inputTokenDetails: { noCacheTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 1200 } })
    expect(second.usage).toMatchObject({ inputTokens: 1210, inputTokenDetails: { noCacheTokens: 10, cacheReadTokens: 1200, cacheWriteTokens: 0 } })
    expect(second.text).toBe('ok')
  })
})

describe('openai against the simulator', () => {
  const system = { role: 'system' as const, content: filler(1300) }

  test('chat.completions.create reports cached_tokens in 128-token steps, routed by prompt_cache_key', async () => {
    const simulator = await startSimulator()
    const client = new OpenAI({ apiKey: 'test-key', baseURL: simulator.baseURL('openai'), maxRetries: 0 })
    const ask = (word: string, key: string) => client.chat.completions.create({ model: 'gpt-5', prompt_cache_key: key, messages: [system, { role: 'user', content: filler(20, word) }] })
    const first = await ask('pear', 'agent-1')
    const second = await ask('plum', 'agent-1')
    const otherKey = await ask('plum', 'agent-2')
    await simulator.close()
    expect(first.usage).toMatchObject({ prompt_tokens: 1326, prompt_tokens_details: { cached_tokens: 0 } })
    expect(second.usage).toMatchObject({ prompt_tokens: 1326, prompt_tokens_details: { cached_tokens: 1280 } })
    expect(otherKey.usage!.prompt_tokens_details!.cached_tokens).toBe(0)
    expect(usageFromOpenAI(second.usage!)).toMatchObject({ inputTokens: 1326, cachedInputTokens: 1280 })
    expect(simulator.requests.map((exchange) => exchange.body.prompt_cache_key)).toEqual(['agent-1', 'agent-1', 'agent-2'])
  })

  test('responses.create reports input_tokens_details.cached_tokens', async () => {
    const simulator = await startSimulator()
    const client = new OpenAI({ apiKey: 'test-key', baseURL: simulator.baseURL('openai'), maxRetries: 0 })
    const ask = (word: string) => client.responses.create({ model: 'gpt-5', instructions: system.content, input: [{ role: 'user', content: filler(20, word) }] })
    await ask('pear')
    const second = await ask('plum')
    await simulator.close()
    expect(second.usage).toMatchObject({ input_tokens: 1326, input_tokens_details: { cached_tokens: 1280 } })
    expect(second.output_text).toBe('ok')
  })

  test('a scripted tool call comes back as a function tool call', async () => {
    const simulator = await startSimulator({ reply: () => ({ tool: { name: 'read', input: { path: 'a.ts' } } }) })
    const client = new OpenAI({ apiKey: 'test-key', baseURL: simulator.baseURL('openai'), maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'Read a.ts.' }] })
    await simulator.close()
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }] },
    })
  })
})

describe('DeepSeek (the openai client) against the simulator', () => {
  test('chat.completions.create hands back prompt_cache_hit_tokens / prompt_cache_miss_tokens in 64-token units', async () => {
    const simulator = await startSimulator()
    const client = new OpenAI({ apiKey: 'test-key', baseURL: simulator.baseURL('deepseek'), maxRetries: 0 })
    const ask = (word: string) =>
      client.chat.completions.create({ model: 'deepseek-chat', messages: [{ role: 'system', content: filler(1000) }, { role: 'user', content: filler(20, word) }] })
    await ask('pear')
    const second = await ask('plum')
    await simulator.close()
    expect(simulator.requests.map((exchange) => exchange.provider)).toEqual(['deepseek', 'deepseek'])
    expect(second.usage).toMatchObject({ prompt_tokens: 1026, prompt_cache_hit_tokens: 960, prompt_cache_miss_tokens: 66 })
    expect(second.usage).not.toHaveProperty('prompt_tokens_details')
  })
})
