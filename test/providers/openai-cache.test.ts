import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSimulator, type Simulator } from '../../examples/simulator/index.js'
import { historyOf, toOpenAIChat, toOpenAIResponses } from '../../src/index.js'
import { ASSEMBLY, assemblyOf, PROMPT, promptOf, SNAPSHOT, tool } from './fixtures.js'

let server: Simulator
let client: OpenAI
beforeAll(async () => {
  server = await startSimulator({ reply: () => ({ text: 'Done.' }) })
  client = new OpenAI({ apiKey: 'test-key', baseURL: `${server.url}/v1`, maxRetries: 0 })
})
afterAll(() => server.close())

const STABLE = promptOf([['identity', 'You are Loom.', 'static', true], ['workspace', 'Work in /w.', 'session'], ['clock', 'Step 1.', 'volatile']])

describe('promptCacheKey', () => {
  test('true sends prompt_cache_key "pl-" + 16 hex digits through both real SDK calls; a string is sent as it is', async () => {
    await client.chat.completions.create({ model: 'gpt-5', ...toOpenAIChat({ assembly: ASSEMBLY, rendered: STABLE, messages: [], promptCacheKey: true }) })
    const chatKey = server.requests.at(-1)!.body.prompt_cache_key
    expect(chatKey).toMatch(/^pl-[0-9a-f]{16}$/)
    await client.responses.create({ model: 'gpt-5', ...toOpenAIResponses({ assembly: ASSEMBLY, rendered: STABLE, input: [], promptCacheKey: true }) })
    expect(server.requests.at(-1)!.body.prompt_cache_key).toBe(chatKey)
    await client.chat.completions.create({ model: 'gpt-5', ...toOpenAIChat({ assembly: ASSEMBLY, rendered: STABLE, messages: [], promptCacheKey: 'team-a' }) })
    expect(server.requests.at(-1)!.body.prompt_cache_key).toBe('team-a')
    await client.chat.completions.create({ model: 'gpt-5', ...toOpenAIChat({ assembly: ASSEMBLY, rendered: STABLE, messages: [] }) })
    expect(server.requests.at(-1)!.body).not.toHaveProperty('prompt_cache_key')
  })

  test('the derived key ignores volatile blocks, the snapshot and the history; it follows the stable run and the tools', () => {
    const key = (rendered = STABLE, assembly = ASSEMBLY, messages: OpenAI.Chat.ChatCompletionMessageParam[] = [], snapshot?: string) =>
      toOpenAIChat({ assembly, rendered, messages, snapshot, promptCacheKey: true }).prompt_cache_key
    const base = key()
    expect(key(promptOf([['identity', 'You are Loom.', 'static', true], ['workspace', 'Work in /w.', 'session'], ['clock', 'Step 2.', 'volatile']]))).toBe(base)
    expect(key(STABLE, ASSEMBLY, [{ role: 'user', content: 'hi' }], 'another snapshot')).toBe(base)
    expect(key(promptOf([['identity', 'You are Loom.', 'static', true], ['workspace', 'Work in /x.', 'session'], ['clock', 'Step 1.', 'volatile']]))).not.toBe(base)
    expect(key(STABLE, assemblyOf([], { tools: [tool('read')] }))).not.toBe(base)
    expect(base!.length).toBeLessThanOrEqual(64)
  })

  test('a bad promptCacheKey is a TypeError naming it', () => {
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [], promptCacheKey: '' })).toThrow(/toOpenAIChat option "promptCacheKey" must be true .* or a non-empty string of at most 64 characters \(got a string of 0 characters\)/)
    expect(() => toOpenAIResponses({ assembly: ASSEMBLY, input: [], promptCacheKey: 'x'.repeat(65) })).toThrow(/toOpenAIResponses option "promptCacheKey"/)
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [], promptCacheKey: false as never })).toThrow(/\(got boolean false\)/)
  })
})

describe('a trailing system or developer message stays last', () => {
  test('chat: the snapshot goes before the trailing run; historyOf keeps it there without the leading system message', () => {
    const history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Go.' }, { role: 'system', content: 'Be brief.' }, { role: 'developer', content: 'No emoji.' }]
    const request = toOpenAIChat({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(request.messages).toEqual([{ role: 'system', content: PROMPT.text }, history[0], { role: 'user', content: SNAPSHOT }, history[1], history[2]])
    expect(historyOf(request)).toEqual([history[0], { role: 'user', content: SNAPSHOT }, history[1], history[2]])
    expect(historyOf(request, { snapshot: false })).toEqual(history)
  })

  test('responses: the snapshot item goes before trailing system/developer messages', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Go.' }, { role: 'developer', content: 'Be brief.' }]
    const request = toOpenAIResponses({ assembly: ASSEMBLY, rendered: PROMPT, input })
    await client.responses.create({ model: 'gpt-5', ...request })
    expect(server.requests.at(-1)!.body.input).toEqual([input[0], { role: 'user', content: SNAPSHOT }, input[1]])
    expect(historyOf(request)).toEqual([input[0], { role: 'user', content: SNAPSHOT }, input[1]])
  })
})

describe('bad tools and history elements', () => {
  test('a tool without parameters names the tool; a null element and a non-iterable content name the index', () => {
    const missing = assemblyOf([], { tools: [{ name: 'ping', description: 'P.', parameters: null } as never] })
    expect(() => toOpenAIChat({ assembly: missing, messages: [] })).toThrow(/toOpenAIChat option "assembly" has tool "ping" whose parameters are null/)
    expect(() => toOpenAIResponses({ assembly: missing, input: [] })).toThrow(/toOpenAIResponses option "assembly" has tool "ping"/)
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [{ role: 'user', content: 'a' }, null as never] })).toThrow(/toOpenAIChat option "messages" has null at index 1/)
    expect(() => toOpenAIResponses({ assembly: ASSEMBLY, input: [undefined as never] })).toThrow(/toOpenAIResponses option "input" has undefined at index 0/)
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [{ role: 'user', content: 7 } as never] })).toThrow(/message at index 0 whose content is number 7/)
    // An assistant message with tool calls has content null: allowed.
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [{ role: 'assistant', content: null, tool_calls: [] }] })).not.toThrow()
  })
})
