import { describe, expect, test } from 'vitest'
import { createCacheSimulator, type CacheSimulator, type SimulatorOptions } from '../../examples/simulator/index.js'

// OpenAI's and DeepSeek's documented caching rules, one request pair per rule: the second request's
// cached tokens. A message is one unit, "<role>\n" (3 tokens) then its content; ' <word>' repeated
// is one token per repetition. The pairs below share a system message of n filler tokens and differ
// in the user message's first word, so their common prefix is n + 3 (system framing) + 3 (user framing).

const MINUTE = 60_000

function filler(tokens: number, word = 'apple'): string {
  return ` ${word}`.repeat(tokens)
}

function chat(systemTokens: number, userWord: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'gpt-5', messages: [{ role: 'system', content: filler(systemTokens) }, { role: 'user', content: filler(20, userWord) }], ...extra }
}

function cachedOf(sim: CacheSimulator, path: string, body: Record<string, unknown>): number {
  const exchange = sim.handle(path, body)
  expect(exchange.status, JSON.stringify(exchange.response)).toBe(200)
  return exchange.cachedTokens
}

interface Row {
  readonly rule: string
  readonly systemTokens: number
  readonly keys?: readonly [string | undefined, string | undefined]
  readonly wait?: number
  readonly retention?: '24h'
  readonly cached: number
}

const OPENAI_ROWS: readonly Row[] = [
  { rule: 'a 1006-token common prefix is under the 1024-token minimum: nothing cached', systemTokens: 1000, cached: 0 },
  { rule: 'a 1023-token common prefix: nothing cached', systemTokens: 1017, cached: 0 },
  { rule: 'a 1024-token common prefix: 1024 cached', systemTokens: 1018, cached: 1024 },
  { rule: 'a 1151-token common prefix: still 1024 (128-token steps)', systemTokens: 1145, cached: 1024 },
  { rule: 'a 1152-token common prefix: 1152', systemTokens: 1146, cached: 1152 },
  { rule: 'a 1306-token common prefix: 1280', systemTokens: 1300, cached: 1280 },
  { rule: 'the same prompt_cache_key routes to the same machine', systemTokens: 1300, keys: ['agent-1', 'agent-1'], cached: 1280 },
  { rule: 'a different prompt_cache_key routes to another machine: nothing cached', systemTokens: 1300, keys: ['agent-1', 'agent-2'], cached: 0 },
  { rule: 'a key on one request only changes its route: nothing cached', systemTokens: 1300, keys: [undefined, 'agent-1'], cached: 0 },
  { rule: 'in-memory retention: read after 4 minutes 59.999 seconds idle', systemTokens: 1300, wait: 5 * MINUTE - 1, cached: 1280 },
  { rule: 'in-memory retention: evicted after 5 minutes idle', systemTokens: 1300, wait: 5 * MINUTE, cached: 0 },
  { rule: "prompt_cache_retention '24h': read after 23 hours", systemTokens: 1300, retention: '24h', wait: 23 * 60 * MINUTE, cached: 1280 },
  { rule: "prompt_cache_retention '24h': evicted after 24 hours", systemTokens: 1300, retention: '24h', wait: 24 * 60 * MINUTE, cached: 0 },
]

describe('the simulated OpenAI cache (Chat Completions)', () => {
  test.each(OPENAI_ROWS)('$rule', ({ systemTokens, keys = [undefined, undefined], wait = 0, retention, cached }) => {
    const sim = createCacheSimulator()
    const extra = (key: string | undefined) => ({ ...(key === undefined ? {} : { prompt_cache_key: key }), ...(retention === undefined ? {} : { prompt_cache_retention: retention }) })
    expect(cachedOf(sim, '/v1/chat/completions', chat(systemTokens, 'pear', extra(keys[0])))).toBe(0)
    sim.advance(wait)
    expect(cachedOf(sim, '/v1/chat/completions', chat(systemTokens, 'plum', extra(keys[1])))).toBe(cached)
  })

  test('the tools come first in the prefix: a changed tool leaves nothing cached', () => {
    const sim = createCacheSimulator()
    const tool = (description: string) => ({ type: 'function', function: { name: 'read', description, parameters: { type: 'object' } } })
    cachedOf(sim, '/v1/chat/completions', chat(1300, 'pear', { tools: [tool('Read a file.')] }))
    expect(cachedOf(sim, '/v1/chat/completions', chat(1300, 'pear', { tools: [tool('Read one file.')] }))).toBe(0)
    expect(cachedOf(sim, '/v1/chat/completions', chat(1300, 'pear', { tools: [tool('Read one file.')] }))).toBeGreaterThanOrEqual(1280)
  })

  test("a unit's tokens do not depend on the unit after it (a message ending in '.' before the next '<user>')", () => {
    const sim = createCacheSimulator()
    const body = { model: 'gpt-5', messages: [{ role: 'system', content: `${filler(1300)}.` }, { role: 'user', content: filler(20, 'pear') }] }
    // Tokenized as one string, '.<' would be one token; per unit, the system message is 3 + 1300 + 1.
    expect(sim.handle('/v1/chat/completions', body).promptTokens).toBe(3 + 1300 + 1 + 3 + 20)
  })

  test('past 15 requests a minute on one route, requests overflow to a cold machine', () => {
    const run = (options: SimulatorOptions): number[] => {
      const sim = createCacheSimulator(options)
      const cached = Array.from({ length: 17 }, () => cachedOf(sim, '/v1/chat/completions', chat(1300, 'pear')))
      sim.advance(MINUTE)
      cached.push(cachedOf(sim, '/v1/chat/completions', chat(1300, 'pear')))
      return cached
    }
    const full = 1280 // the whole 1326-token prompt, in 128-token steps
    // 1: cold; 2-15: first machine; 16: overflow machine, cold; 17: overflow machine; a minute later: first machine again.
    expect(run({})).toEqual([0, ...Array<number>(14).fill(full), 0, full, full])
    expect(run({ openaiOverflowPerMinute: Number.POSITIVE_INFINITY })).toEqual([0, ...Array<number>(17).fill(full)])
  })

  test('the Responses API caches tools, instructions and input the same way', () => {
    const sim = createCacheSimulator()
    const body = (word: string) => ({ model: 'gpt-5', instructions: filler(1300), input: [{ role: 'user', content: filler(20, word) }] })
    expect(cachedOf(sim, '/v1/responses', body('pear'))).toBe(0)
    const second = sim.handle('/v1/responses', body('plum'))
    expect(second.cachedTokens).toBe(1280)
    expect(second.response.usage).toMatchObject({ input_tokens: 1300 + 3 + 3 + 20, input_tokens_details: { cached_tokens: 1280 } })
    // The instructions are the system part; the cached 1280 tokens end inside them.
    expect(second.promptTokensBySection).toEqual({ tools: 0, system: 1303, messages: 23 })
    expect(second.cachedTokensBySection).toEqual({ tools: 0, system: 1280, messages: 0 })
  })
})

const DEEPSEEK_ROWS: readonly Row[] = [
  { rule: 'a 63-token common prefix is under one 64-token unit: nothing cached', systemTokens: 57, cached: 0 },
  { rule: 'a 64-token common prefix: 64 cached', systemTokens: 58, cached: 64 },
  { rule: 'a 1006-token common prefix: 960 (whole 64-token units, no 1024 minimum)', systemTokens: 1000, cached: 960 },
  { rule: 'a 1300-token common prefix: 1280 (20 units)', systemTokens: 1294, cached: 1280 },
]

describe('the simulated DeepSeek cache', () => {
  test.each(DEEPSEEK_ROWS)('$rule', ({ systemTokens, cached }) => {
    const sim = createCacheSimulator()
    const body = (word: string) => ({ ...chat(systemTokens, word), model: 'deepseek-chat' })
    expect(cachedOf(sim, '/deepseek/chat/completions', body('pear'))).toBe(0)
    const second = sim.handle('/deepseek/chat/completions', body('plum'))
    expect(second.cachedTokens).toBe(cached)
    const tokens = systemTokens + 3 + 3 + 20
    expect(second.response.usage).toEqual({
      prompt_tokens: tokens,
      completion_tokens: 1,
      total_tokens: tokens + 1,
      prompt_cache_hit_tokens: cached,
      prompt_cache_miss_tokens: tokens - cached,
      completion_tokens_details: { reasoning_tokens: 0 },
    })
  })

  test('the overlap with any earlier request counts: the longest one wins', () => {
    const sim = createCacheSimulator()
    const system = { role: 'system', content: filler(1000) }
    const turn = (...messages: object[]) => ({ model: 'deepseek-chat', messages: [system, ...messages] })
    const ask = { role: 'user', content: filler(300, 'pear') }
    cachedOf(sim, '/deepseek/chat/completions', turn(ask))
    cachedOf(sim, '/deepseek/chat/completions', turn({ role: 'user', content: filler(50, 'plum') }))
    // system 1003 + ask 303 = 1306 tokens shared with the first request → 1280.
    expect(cachedOf(sim, '/deepseek/chat/completions', turn(ask, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Next.' }))).toBe(1280)
  })

  test('caches are per model', () => {
    const sim = createCacheSimulator()
    cachedOf(sim, '/deepseek/chat/completions', { ...chat(1000, 'pear'), model: 'deepseek-chat' })
    expect(cachedOf(sim, '/deepseek/chat/completions', { ...chat(1000, 'pear'), model: 'deepseek-reasoner' })).toBe(0)
  })
})

describe('the simulator exchanges', () => {
  test('a path no provider serves is a 404 naming the served paths', () => {
    const exchange = createCacheSimulator().handle('/v1/embeddings', { model: 'x' })
    expect(exchange).toMatchObject({ status: 404, provider: undefined })
    expect(JSON.stringify(exchange.response)).toContain('the simulator serves /v1/messages, /v1/chat/completions, /v1/responses and /deepseek/chat/completions')
  })

  test('the prompt and the cached prefix are split into tools, leading system messages and the rest (OpenAI, DeepSeek)', () => {
    const sim = createCacheSimulator()
    const tool = { type: 'function', function: { name: 'read', description: filler(40, 'tool'), parameters: { type: 'object' } } }
    const messages = [{ role: 'system', content: filler(1300) }, { role: 'user', content: filler(20, 'pear') }, { role: 'assistant', content: filler(200, 'fig') }]
    const body = { model: 'gpt-5', messages, tools: [tool] }
    const toolTokens = sim.handle('/v1/chat/completions', body).promptTokensBySection.tools
    expect(toolTokens).toBeGreaterThan(40)
    const second = sim.handle('/v1/chat/completions', { ...body, messages: [...body.messages, { role: 'user', content: filler(10, 'kiwi') }] })
    expect(second.promptTokensBySection).toEqual({ tools: toolTokens, system: 1303, messages: 23 + 203 + 13 })
    // The cached prefix is the shared tools, system, user and assistant messages rounded down to 128-token steps.
    const cached = Math.floor((toolTokens + 1303 + 23 + 203) / 128) * 128
    expect(cached - toolTokens - 1303).toBeGreaterThan(0)
    expect(second.cachedTokensBySection).toEqual({ tools: toolTokens, system: 1303, messages: cached - toolTokens - 1303 })
    // A prefix that ends inside the system message: the tools first, the rest of it system.
    const third = sim.handle('/v1/chat/completions', { ...body, messages: [{ role: 'system', content: filler(1300) + filler(5, 'plum') }] })
    const systemCached = Math.floor((toolTokens + 1303) / 128) * 128 - toolTokens
    expect(systemCached).toBeLessThan(1303)
    expect(third.cachedTokensBySection).toEqual({ tools: toolTokens, system: systemCached, messages: 0 })
    const deepseek = (messages: unknown[]) => sim.handle('/deepseek/chat/completions', { model: 'deepseek-chat', messages })
    deepseek([{ role: 'system', content: filler(100) }, { role: 'developer', content: filler(30, 'plum') }, { role: 'user', content: filler(20, 'pear') }])
    const again = deepseek([{ role: 'system', content: filler(100) }, { role: 'developer', content: filler(30, 'plum') }, { role: 'user', content: filler(20, 'fig') }])
    expect(again.promptTokensBySection).toEqual({ tools: 0, system: 136, messages: 23 })
    expect(again.cachedTokensBySection).toEqual({ tools: 0, system: 128, messages: 0 })
  })

  test('a body that is not JSON is a 400, and streaming is refused', () => {
    const sim = createCacheSimulator()
    expect(sim.handle('/v1/messages', '{').status).toBe(400)
    const streamed = sim.handle('/v1/chat/completions', { ...chat(10, 'pear'), stream: true })
    expect(streamed.status).toBe(400)
    expect(streamed.response).toEqual({ error: { message: 'the simulator does not stream; send the request without stream: true', type: 'invalid_request_error', param: null, code: null } })
  })

  test('every exchange is recorded in order with its provider, body and token figures', () => {
    const sim = createCacheSimulator({ reply: ({ n }) => ({ text: `reply ${n}` }) })
    sim.handle('/v1/chat/completions', chat(1300, 'pear'))
    sim.handle('/deepseek/chat/completions', { ...chat(10, 'pear'), model: 'deepseek-chat' })
    sim.handle('/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
    expect(sim.requests.map(({ n, provider, status, promptTokens, cachedTokens }) => ({ n, provider, status, promptTokens, cachedTokens }))).toEqual([
      { n: 1, provider: 'openai-chat', status: 200, promptTokens: 1326, cachedTokens: 0 },
      { n: 2, provider: 'deepseek', status: 200, promptTokens: 36, cachedTokens: 0 },
      { n: 3, provider: 'anthropic', status: 200, promptTokens: 1, cachedTokens: 0 },
    ])
    expect(sim.requests[1]!.body.model).toBe('deepseek-chat')
    expect(sim.requests[2]!.response.content).toEqual([{ type: 'text', text: 'reply 3' }])
  })
})
