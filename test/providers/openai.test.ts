import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSimulator, type Simulator } from '../../examples/simulator/index.js'
import { createStepSurface, toOpenAIChat, toOpenAIResponses, TOOL_ORDER_REST, usageFromOpenAI } from '../../src/index.js'
import { ASSEMBLY, assemblyOf, PROMPT, SNAPSHOT, tool } from './fixtures.js'

const CHAT_HISTORY: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'user', content: 'Fix the failing test.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'expect(1).toBe(2)' },
]

const RESPONSES_INPUT: OpenAI.Responses.ResponseInputItem[] = [
  { role: 'user', content: 'Fix the failing test.' },
  { type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"path":"a.ts"}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'expect(1).toBe(2)' },
]

let server: Simulator
let client: OpenAI
beforeAll(async () => {
  server = await startSimulator({ reply: () => ({ text: 'Done.' }) })
  client = new OpenAI({ apiKey: 'test-key', baseURL: `${server.url}/v1`, maxRetries: 0 })
})
afterAll(() => server.close())

describe('toOpenAIChat through the real SDK client', () => {
  test('chat.completions.create sends the system message, the history, the snapshot after the last tool message, and the tools', async () => {
    const history = structuredClone(CHAT_HISTORY)
    const surface = createStepSurface()
    surface.step({ assembly: ASSEMBLY })
    const completion = await client.chat.completions.create({ model: 'gpt-5', ...toOpenAIChat({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }) })
    const { body, promptTokens, cachedTokens } = server.requests.at(-1)!
    expect(body.messages).toEqual([{ role: 'system', content: PROMPT.text }, ...CHAT_HISTORY, { role: 'user', content: SNAPSHOT }])
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'read', description: 'The read tool.', parameters: tool('read').parameters } },
      { type: 'function', function: { name: 'grep', description: 'The grep tool.', parameters: tool('grep').parameters } },
    ])
    expect(history).toEqual(CHAT_HISTORY)
    expect(surface.observeUsage(usageFromOpenAI(completion.usage!))).toEqual({ type: 'usage', step: 1, inputTokens: promptTokens, cachedInputTokens: cachedTokens })
  })

  test('an assembly without tools sends no tools field (Chat Completions rejects an empty tools array)', async () => {
    const bare = assemblyOf([], { tools: [] })
    const request = toOpenAIChat({ assembly: bare, rendered: PROMPT, messages: [], snapshot: false })
    expect('tools' in request).toBe(false)
    await client.chat.completions.create({ model: 'gpt-5', ...request })
    expect(Object.keys(server.requests.at(-1)!.body)).toEqual(['model', 'messages'])
  })

  test("role 'developer' leads with a developer message (reasoning models)", async () => {
    await client.chat.completions.create({ model: 'o3', ...toOpenAIChat({ assembly: ASSEMBLY, rendered: PROMPT, messages: [], role: 'developer', snapshot: false }) })
    expect(server.requests.at(-1)!.body.messages).toEqual([{ role: 'developer', content: PROMPT.text }])
  })
})

describe('toOpenAIChat', () => {
  test('the history array is not the one returned, and an empty snapshot adds no message', () => {
    const request = toOpenAIChat({ assembly: ASSEMBLY, messages: CHAT_HISTORY, snapshot: '' })
    expect(request.messages).toHaveLength(CHAT_HISTORY.length + 1)
    expect(request.messages.slice(1)).toEqual(CHAT_HISTORY)
    expect(CHAT_HISTORY).toHaveLength(3)
  })

  test('an unknown role is a TypeError naming the option', () => {
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [], role: 'assistant' as never })).toThrow(/toOpenAIChat option "role" must be 'system' or 'developer'/)
  })

  test('bad input is a TypeError naming the argument', () => {
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: undefined as never })).toThrow(/toOpenAIChat option "messages" must be an array/)
    expect(() => toOpenAIChat({ assembly: ASSEMBLY, messages: [], snapshot: 3 as never })).toThrow(/option "snapshot"/)
    expect(() => toOpenAIChat({ assembly: assemblyOf([], { tools: [tool(TOOL_ORDER_REST)] }), messages: [] })).toThrow(/option "assembly" .*reserved/)
  })

  test('a tool whose parameters are not an object schema is a TypeError naming the tool (OpenAI rejects it with a 400)', () => {
    const wrong = assemblyOf([['a', 'A']], { tools: [{ name: 'ping', description: 'Ping.', parameters: { type: 'array' } }] })
    const message = /option "assembly" has tool "ping" whose parameters have type string "array"; tool parameters must be an object schema/
    expect(() => toOpenAIChat({ assembly: wrong, messages: [] })).toThrow(message)
    expect(() => toOpenAIResponses({ assembly: wrong, input: [] })).toThrow(message)
  })
})

describe('toOpenAIResponses through the real SDK client', () => {
  test('responses.create sends the instructions, the input with the snapshot item last, and strict: false function tools', async () => {
    const input = structuredClone(RESPONSES_INPUT)
    const surface = createStepSurface()
    surface.step({ assembly: ASSEMBLY })
    const response = await client.responses.create({ model: 'gpt-5', ...toOpenAIResponses({ assembly: ASSEMBLY, rendered: PROMPT, input }) })
    const { body, promptTokens, cachedTokens } = server.requests.at(-1)!
    expect(body.instructions).toBe(PROMPT.text)
    expect(body.input).toEqual([...RESPONSES_INPUT, { role: 'user', content: SNAPSHOT }])
    expect(body.tools).toEqual([
      { type: 'function', name: 'read', description: 'The read tool.', parameters: tool('read').parameters, strict: false },
      { type: 'function', name: 'grep', description: 'The grep tool.', parameters: tool('grep').parameters, strict: false },
    ])
    expect(input).toEqual(RESPONSES_INPUT)
    expect(response.output_text).toBe('Done.')
    expect(surface.observeUsage(usageFromOpenAI(response.usage!))).toEqual({ type: 'usage', step: 1, inputTokens: promptTokens, cachedInputTokens: cachedTokens })
  })
})

describe('toOpenAIResponses', () => {
  test('an input that is not an array is a TypeError naming it', () => {
    expect(() => toOpenAIResponses({ assembly: ASSEMBLY, input: 'Fix it.' as never })).toThrow(/toOpenAIResponses option "input" must be an array/)
  })
})
