import { createAnthropic } from '@ai-sdk/anthropic'
import { generateText, jsonSchema, tool, type ModelMessage } from 'ai'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSimulator, type Simulator } from '../../examples/simulator/index.js'
import { historyOf, toAISDK, usageFromAISDK } from '../../src/index.js'
import { ASSEMBLY, assemblyOf, PROMPT, promptOf, SNAPSHOT } from './fixtures.js'

// SPEC §4.3 in the AI SDK form: the history breakpoint is the message's providerOptions.anthropic.cacheControl.

const mark = (ttl?: '5m' | '1h') => ({ anthropic: { cacheControl: ttl === undefined ? { type: 'ephemeral' as const } : { type: 'ephemeral' as const, ttl } } })

const HISTORY: ModelMessage[] = [
  { role: 'user', content: 'Fix the failing test.' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'read', input: { path: 'a.ts' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'read', output: { type: 'text', value: 'expect(1).toBe(2)' } }] },
]

let server: Simulator
beforeAll(async () => {
  server = await startSimulator({ reply: () => ({ text: 'Done.' }) })
})
afterAll(() => server.close())

describe('toAISDK through generateText and @ai-sdk/anthropic', () => {
  test('ttl reaches the wire: 1h on the system breakpoints and the history breakpoint; the AI SDK usage is read', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const result = await generateText({ model: anthropic('claude-sonnet-4-6'), maxRetries: 0, ...toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: HISTORY, ttl: '1h' }) })
    const { body, promptTokens, cachedTokens, cacheWriteTokens } = server.requests.at(-1)!
    const H1 = { type: 'ephemeral', ttl: '1h' }
    expect(body.system.map((block: { cache_control?: unknown }) => block.cache_control)).toEqual([H1, H1, undefined])
    expect(body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', cache_control: H1 })
    expect(usageFromAISDK(result.usage)).toEqual({ inputTokens: promptTokens, cachedInputTokens: cachedTokens, cacheWriteTokens })
  })

  test('a last message that ends in a reasoning part or an empty text part gets its marker on its last cacheable part', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const thinking = { type: 'reasoning' as const, text: 'Let me check.', providerOptions: { anthropic: { signature: 'sig' } } }
    const history: ModelMessage[] = [
      { role: 'user', content: 'Which test fails?' },
      { role: 'assistant', content: [{ type: 'text', text: 'The first one.' }, thinking] },
    ]
    await generateText({ model: anthropic('claude-sonnet-4-6'), maxRetries: 0, ...toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }) })
    const sent = server.requests.at(-1)!.body.messages[1].content
    expect(sent.map((block: { type: string; cache_control?: unknown }) => [block.type, block.cache_control])).toEqual([
      ['text', { type: 'ephemeral' }],
      ['thinking', undefined],
    ])
    const emptyLast: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Go on.' }, { type: 'text', text: '' }] }]
    const { messages } = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: emptyLast })
    expect(messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Go on.', providerOptions: mark() }, { type: 'text', text: '' }] })
  })

  test('a trailing mid-conversation system message stays last: the snapshot is sent before it', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const history: ModelMessage[] = [...HISTORY, { role: 'system', content: 'Answer in French from now on.' }]
    await generateText({ model: anthropic('claude-opus-4-8'), maxRetries: 0, ...toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }) })
    const { body } = server.requests.at(-1)!
    expect(body.messages.at(-1)).toMatchObject({ role: 'system', content: [{ type: 'text', text: 'Answer in French from now on.' }] })
    expect(body.messages.at(-2).content.map((block: { type: string }) => block.type)).toEqual(['tool_result', 'text'])
    expect(body.messages.at(-2).content[1].text).toBe(SNAPSHOT)
  })
})

describe('toAISDK in the AI SDK tool-approval flow, and markers under another provider key', () => {
  const APPROVED: ModelMessage[] = [
    { role: 'user', content: 'Delete the temp dir.' },
    {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'c1', toolName: 'rm', input: { path: '/tmp/x' } },
        { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
  ]
  const tools = {
    rm: tool({ inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } } }), needsApproval: true, execute: async () => 'removed' }),
  }
  const markers = (body: unknown) => JSON.stringify(body).match(/cache_control/g)?.length ?? 0

  test('an approved tool runs: the snapshot goes before the assistant message that asked, so the approval stays last', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const request = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: APPROVED })
    expect(request.messages.map((message) => message.role)).toEqual(['user', 'user', 'assistant', 'tool'])
    await generateText({ model: anthropic('claude-sonnet-4-6'), maxRetries: 0, tools, ...request })
    const { body } = server.requests.at(-1)!
    expect(body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(body.messages[0].content.map((block: { text?: string; cache_control?: unknown }) => [block.text, block.cache_control])).toEqual([
      ['Delete the temp dir.', { type: 'ephemeral' }],
      [SNAPSHOT, undefined],
    ])
    expect(body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'c1' })
    expect(historyOf(request)).toEqual([APPROVED[0], { role: 'user', content: SNAPSHOT }, APPROVED[1], APPROVED[2]])
  })

  test('without a snapshot the history marker skips the approval parts, which the AI SDK does not send', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    await generateText({ model: anthropic('claude-sonnet-4-6'), maxRetries: 0, tools, ...toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: APPROVED, snapshot: false }) })
    const { body } = server.requests.at(-1)!
    expect(markers(body)).toBe(3)
    expect(body.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'c1', cache_control: { type: 'ephemeral' } })
  })

  test('a marker under another provider key counts toward the limit of 4 (a provider built on @ai-sdk/anthropic may read its own)', () => {
    const marked = (text: string) => ({ type: 'text' as const, text, providerOptions: { gateway: { cacheControl: { type: 'ephemeral' } } } })
    const history: ModelMessage[] = [
      { role: 'user', content: [marked('doc 1')] },
      { role: 'assistant', content: 'Read.' },
      { role: 'user', content: [marked('doc 2')] },
      { role: 'assistant', content: 'Read too.' },
      { role: 'user', content: 'Compare them.' },
    ]
    const request = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, snapshot: false })
    expect(JSON.stringify(request).match(/cacheControl/g)).toHaveLength(4)
    expect(request.system.map((message) => message.providerOptions !== undefined)).toEqual([false, true, false])
    expect(request.messages[4]).toMatchObject({ providerOptions: mark() })
  })
})

describe('toAISDK: markers', () => {
  test('the history breakpoint is cacheControl on the last history message; with the snapshot after it', () => {
    const { messages } = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: HISTORY })
    expect(messages).toEqual([HISTORY[0], HISTORY[1], { ...HISTORY[2], providerOptions: mark() }, { role: 'user', content: SNAPSHOT }])
  })

  test("markers nested in parts count at any depth (a tool-result's content output), a JSON output's value does not", () => {
    const nested: ModelMessage[] = [
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 't1',
            toolName: 'read',
            output: { type: 'content', value: [1, 2, 3].map((n) => ({ type: 'text' as const, text: `${n}`, providerOptions: mark() })) },
          },
          { type: 'tool-result', toolCallId: 't2', toolName: 'read', output: { type: 'json', value: { providerOptions: mark() } } },
        ],
      },
    ]
    const { system, messages } = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: nested })
    // 3 caller markers: one slot left, the history breakpoint's.
    expect(system.every((message) => message.providerOptions === undefined)).toBe(true)
    expect(messages[0]).toEqual({ ...nested[0], providerOptions: mark() })
  })

  test('binary image and file data is not searched for markers (its bytes are never read as properties)', () => {
    const bytes = new Uint8Array(8)
    Object.defineProperty(bytes, 'providerOptions', { enumerable: true, get: () => expect.unreachable('a byte array was walked') })
    const history: ModelMessage[] = [
      { role: 'user', content: [{ type: 'image', image: bytes, mediaType: 'image/png' }, { type: 'file', data: bytes.buffer, mediaType: 'application/pdf' }] },
    ]
    const { messages } = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(messages[0]).toEqual({ ...history[0], providerOptions: mark() })
  })

  test("the caller's markers stay as they are; an already marked last message gets no second marker", () => {
    const marked: ModelMessage[] = [{ role: 'user', content: 'a', providerOptions: mark('1h') }]
    const request = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: marked })
    expect(request.messages).toEqual([marked[0], { role: 'user', content: SNAPSHOT }])
    expect(request.system.map((message) => message.providerOptions)).toEqual([mark('1h'), mark('1h'), undefined])
  })

  test('caller markers out of order are a TypeError naming the message index; a bad ttl names ttl', () => {
    const bad: ModelMessage[] = [{ role: 'user', content: 'a', providerOptions: mark() }, { role: 'user', content: 'b', providerOptions: mark('1h') }]
    expect(() => toAISDK({ assembly: ASSEMBLY, messages: bad })).toThrow(/toAISDK option "messages" has a cache marker with ttl '1h' at index 1 after a 5-minute one at index 0/)
    expect(() => toAISDK({ assembly: ASSEMBLY, messages: [], ttl: 60 as never })).toThrow(/toAISDK option "ttl" must be/)
  })

  test('at most 4 markers counting the caller’s: the history breakpoint first, then the latest system breakpoints', () => {
    const four = promptOf(['a', 'b', 'c', 'd'].map((name) => [name, name, 'static', true] as const))
    const marked: ModelMessage[] = [{ role: 'user', content: 'x', providerOptions: mark() }, { role: 'assistant', content: 'y' }]
    const { system, messages } = toAISDK({ assembly: ASSEMBLY, rendered: four, messages: marked, snapshot: false })
    expect(system.map((message) => message.providerOptions !== undefined)).toEqual([false, false, true, true])
    expect(messages[1]).toEqual({ role: 'assistant', content: 'y', providerOptions: mark() })
  })
})

describe('toAISDK: whitespace-only blocks', () => {
  test('join the next system message (the previous when last), as in toAnthropic: the provider rejects blank system text', async () => {
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const rendered = promptOf([['identity', 'You are Loom.', 'static', true], ['todo', '\n', 'volatile'], ['clock', 'Step 7.', 'session']])
    const request = toAISDK({ assembly: ASSEMBLY, rendered, messages: [{ role: 'user', content: 'Go on.' }], snapshot: false })
    expect(request.system.map((message) => message.content)).toEqual(['You are Loom.', '\n\n\nStep 7.'])
    await generateText({ model: anthropic('claude-sonnet-4-6'), maxRetries: 0, ...request })
    expect(server.requests.at(-1)!.body.system.map((block: { text: string }) => block.text)).toEqual(['You are Loom.', '\n\n\nStep 7.'])
  })
})

describe('historyOf(toAISDK(...)) and bad input', () => {
  test('is the caller history plus the snapshot message, without the history breakpoint', () => {
    const request = toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: HISTORY })
    expect(historyOf(request)).toEqual([...HISTORY, { role: 'user', content: SNAPSHOT }])
    expect(historyOf(request, { snapshot: false })).toEqual(HISTORY)
    expect(JSON.stringify(historyOf(request))).not.toContain('cacheControl')
  })

  test('a tool without parameters names the tool; a null message and a non-iterable content name the index', () => {
    expect(() => toAISDK({ assembly: assemblyOf([], { tools: [{ name: 'ping', description: 'P.' } as never] }), messages: [] })).toThrow(/toAISDK option "assembly" has tool "ping" whose parameters are undefined/)
    expect(() => toAISDK({ assembly: ASSEMBLY, messages: [null as never] })).toThrow(/toAISDK option "messages" has null at index 0/)
    expect(() => toAISDK({ assembly: ASSEMBLY, messages: [{ role: 'user', content: {} } as never] })).toThrow(/message at index 0 whose content is an object/)
  })
})
