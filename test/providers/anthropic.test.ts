import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSimulator, type Simulator } from '../../examples/simulator/index.js'
import { createStepSurface, render, toAnthropic, TOOL_ORDER_REST, usageFromAnthropic } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'
import { ASSEMBLY, assemblyOf, PROMPT, promptOf, SNAPSHOT, tool } from './fixtures.js'

const EPHEMERAL = { type: 'ephemeral' }

/** A tool round trip: the last message is the user turn holding the tool result. */
const HISTORY: Anthropic.MessageParam[] = [
  { role: 'user', content: 'Fix the failing test.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'test/a.test.ts' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'expect(1).toBe(2)' }] },
]

let server: Simulator
beforeAll(async () => {
  server = await startSimulator({ reply: () => ({ text: 'Done.' }) })
})
afterAll(() => server.close())

describe('toAnthropic through the real SDK client', () => {
  test('client.messages.create sends the system blocks, markers, tools and snapshot exactly; the history is untouched', async () => {
    const history = structuredClone(HISTORY)
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 })
    const surface = createStepSurface()
    const step = surface.step({ assembly: ASSEMBLY })
    const message = await client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      ...toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }),
    })
    const { body } = server.requests.at(-1)!
    expect(body.system).toEqual([
      { type: 'text', text: 'You are Loom, a coding agent.\n\nRun the tests before you commit.', cache_control: EPHEMERAL },
      { type: 'text', text: 'Work in /work/agent-1.', cache_control: EPHEMERAL },
      { type: 'text', text: 'Step 7.' },
    ])
    expect(body.tools).toEqual([
      { name: 'read', description: 'The read tool.', input_schema: tool('read').parameters },
      { name: 'grep', description: 'The grep tool.', input_schema: tool('grep').parameters, cache_control: EPHEMERAL },
    ])
    // The history breakpoint marks the tool result, right before the snapshot block.
    expect(body.messages).toEqual([
      HISTORY[0],
      HISTORY[1],
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'expect(1).toBe(2)', cache_control: EPHEMERAL },
          { type: 'text', text: SNAPSHOT },
        ],
      },
    ])
    expect(history).toEqual(HISTORY)

    const usage = surface.observeUsage(usageFromAnthropic(message.usage))
    const served = server.requests.at(-1)!
    expect(usage).toEqual({
      type: 'usage',
      step: step.step,
      inputTokens: served.promptTokens,
      cachedInputTokens: served.cachedTokens,
      cacheWriteTokens: served.cacheWriteTokens,
      // The simulated usage splits its writes by TTL, as Anthropic's does: every marker here is 5-minute.
      cacheWrite5mTokens: served.cacheWriteTokens,
      cacheWrite1hTokens: 0,
    })
  })
})

describe('toAnthropic', () => {
  test('a history that ends with an assistant turn gets the snapshot as a new user message', () => {
    const history: Anthropic.MessageParam[] = [HISTORY[0]!, { role: 'assistant', content: 'Which test?' }]
    const { messages } = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, historyBreakpoint: false })
    expect(messages).toEqual([...history, { role: 'user', content: [{ type: 'text', text: SNAPSHOT }] }])
  })

  test('an empty history gets the snapshot as the only user message', () => {
    expect(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: [] }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: SNAPSHOT }] }])
  })

  test('a last user turn with string content becomes text blocks, the snapshot last; the caller keeps its message', () => {
    const last: Anthropic.MessageParam = { role: 'user', content: 'Fix it.' }
    const { messages } = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: [last] })
    expect(messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Fix it.', cache_control: EPHEMERAL }, { type: 'text', text: SNAPSHOT }] }])
    expect(last).toEqual({ role: 'user', content: 'Fix it.' })
  })

  test("snapshot false or '' sends no snapshot, and a given string replaces the assembly's", () => {
    const history: Anthropic.MessageParam[] = [HISTORY[0]!]
    expect(toAnthropic({ assembly: ASSEMBLY, messages: history, snapshot: false, historyBreakpoint: false }).messages).toEqual(history)
    expect(toAnthropic({ assembly: ASSEMBLY, messages: history, snapshot: '', historyBreakpoint: false }).messages).toEqual(history)
    expect(toAnthropic({ assembly: ASSEMBLY, messages: [], snapshot: 'Now: 12:00.' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Now: 12:00.' }] }])
  })

  test('without rendered the assembly is rendered; a prompt nobody annotated is cached through its end, tools too', () => {
    const request = toAnthropic({ assembly: ASSEMBLY, messages: [] })
    expect(request.system).toEqual([{ type: 'text', text: 'You are Loom, a coding agent.\n\nRun the tests before you commit.', cache_control: EPHEMERAL }])
    expect(request.tools.map((t) => t.cache_control)).toEqual([undefined, EPHEMERAL])
  })

  test('a prompt with no stable run (it starts volatile) puts no marker on the system or the tools', () => {
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: promptOf([['clock', 'Now.', 'volatile', true]]), messages: [] })
    expect(request.system).toEqual([{ type: 'text', text: 'Now.' }])
    expect(request.tools.some((t) => t.cache_control !== undefined)).toBe(false)
  })

  test("a steady step's assembly renders as the unchanged prompt", async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Run the tests.', cacheBreakpoint: true })
    const first = render(await app.systemPrompt.assemble())
    const assembly = await app.systemPrompt.assemble()
    const request = toAnthropic({ assembly, messages: [] })
    expect(render(assembly)).toBe(first)
    expect(request.system).toEqual([{ type: 'text', text: 'Run the tests.', cache_control: EPHEMERAL }])
  })

  test('at most 4 markers: the latest breakpoints are kept and the tools marker goes first', () => {
    const five = promptOf(['a', 'b', 'c', 'd', 'e'].map((name) => [name, name.toUpperCase(), 'static', true] as const))
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: five, messages: [] })
    expect(request.system.map((block) => block.cache_control !== undefined)).toEqual([false, true, true, true, true])
    expect(request.tools.at(-1)).not.toHaveProperty('cache_control')
  })

  test("markers already in the caller's history count toward the limit of 4", () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'one', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: [{ type: 'text', text: 'three', cache_control: { type: 'ephemeral' } }] },
    ]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, snapshot: false })
    expect(request.system.map((block) => block.cache_control !== undefined)).toEqual([true, true, false])
    expect(request.tools.at(-1)).not.toHaveProperty('cache_control')
    const full = [...history, { role: 'user' as const, content: [1, 2].map((n) => ({ type: 'text' as const, text: `${n}`, cache_control: { type: 'ephemeral' as const } })) }]
    const none = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: full, snapshot: false })
    expect(none.system.every((block) => block.cache_control === undefined)).toBe(true)
  })

  test("a tool schema without a type gets type 'object'; a non-object schema is a TypeError naming the tool", () => {
    const bare = assemblyOf([['a', 'A']], { tools: [{ name: 'ping', description: 'Ping.', parameters: { properties: {} } }] })
    expect(toAnthropic({ assembly: bare, messages: [] }).tools[0]!.input_schema).toEqual({ type: 'object', properties: {} })
    const wrong = assemblyOf([['a', 'A']], { tools: [{ name: 'ping', description: 'Ping.', parameters: { type: 'string' } }] })
    expect(() => toAnthropic({ assembly: wrong, messages: [] })).toThrow(/tool "ping" whose parameters have type string "string"/)
  })

  test('a tool named TOOL_ORDER_REST is a TypeError naming the assembly', () => {
    const reserved = assemblyOf([['a', 'A']], { tools: [tool(TOOL_ORDER_REST)] })
    expect(() => toAnthropic({ assembly: reserved, messages: [] })).toThrow(/toAnthropic option "assembly" has a tool named "<unlisted-tools>", which is reserved/)
  })

  test('a history that is not an array and a snapshot that is not a string or false are TypeErrors naming the argument', () => {
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: 'hi' as never })).toThrow(/toAnthropic option "messages" must be an array/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], snapshot: true as never })).toThrow(/toAnthropic option "snapshot" must be a string, or false/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], snapshot: null as never })).toThrow(TypeError)
  })

  test('the system blocks joined by a blank line are the rendered prompt', () => {
    const { system } = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: [] })
    expect(system.map((block) => block.text).join('\n\n')).toBe(PROMPT.text)
  })

  test('a whitespace-only block, which the API rejects, joins the next block (the previous when last); the text is unchanged', async () => {
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 })
    const rendered = promptOf([
      ['identity', 'You are Loom.', 'static', true],
      ['todo', '\n', 'volatile'],
      ['clock', 'Step 7.', 'session'],
      ['tail', ' ', 'static'],
    ])
    expect(rendered.blocks.map((block) => block.text)).toEqual(['You are Loom.', '\n', 'Step 7.', ' '])
    const request = toAnthropic({ assembly: ASSEMBLY, rendered, messages: [{ role: 'user', content: 'Go on.' }], snapshot: false })
    await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 256, ...request })
    expect(server.requests.at(-1)!.body.system).toEqual([
      { type: 'text', text: 'You are Loom.', cache_control: EPHEMERAL },
      { type: 'text', text: '\n\n\nStep 7.\n\n ' },
    ])
    expect(request.system.map((block) => block.text).join('\n\n')).toBe(rendered.text)
    const blank = promptOf([['todo', '\n', 'volatile']])
    expect(toAnthropic({ assembly: ASSEMBLY, rendered: blank, messages: [] }).system).toEqual([])
  })
})
