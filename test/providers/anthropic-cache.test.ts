import type Anthropic from '@anthropic-ai/sdk'
import { describe, expect, test } from 'vitest'
import { ANTHROPIC_MAX_CACHE_MARKERS, historyOf, toAnthropic, type AnthropicRequest } from '../../src/index.js'
import { ASSEMBLY, assemblyOf, PROMPT, promptOf, SNAPSHOT, tool } from './fixtures.js'

// SPEC §4.3: the marker budget counted at any depth, the history breakpoint, TTLs, historyOf.

const E = { type: 'ephemeral' }
const H1 = { type: 'ephemeral', ttl: '1h' }
const M5 = { type: 'ephemeral', ttl: '5m' }

/** Every cache_control in the request, in prefix order (tools, system, messages at any depth; a tool input is data). */
function markersOf(request: AnthropicRequest<Anthropic.MessageParam>): unknown[] {
  const found: unknown[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (typeof node !== 'object' || node === null) return
    for (const [key, value] of Object.entries(node)) if (key !== 'input' && key !== 'cache_control') walk(value)
    const marker = (node as { cache_control?: unknown }).cache_control
    if (marker != null) found.push(marker)
  }
  walk(request.tools)
  walk(request.system)
  walk(request.messages)
  return found
}

const text = (t: string, cache_control?: Anthropic.CacheControlEphemeral): Anthropic.TextBlockParam => (cache_control ? { type: 'text', text: t, cache_control } : { type: 'text', text: t })

describe('toAnthropic: the marker budget', () => {
  test('markers nested in tool_result contents count: three nested leave one slot, which the history breakpoint takes', () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Read three files.' },
      { role: 'assistant', content: [1, 2, 3].map((n) => ({ type: 'tool_use' as const, id: `t${n}`, name: 'read', input: { n } })) },
      { role: 'user', content: [1, 2, 3].map((n) => ({ type: 'tool_result' as const, tool_use_id: `t${n}`, content: [text(`file ${n}`, { type: 'ephemeral' })] })) },
    ]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(markersOf(request)).toHaveLength(ANTHROPIC_MAX_CACHE_MARKERS)
    expect(request.system.every((block) => block.cache_control === undefined)).toBe(true)
    expect(request.tools.every((t) => t.cache_control === undefined)).toBe(true)
    const last = request.messages[2]!.content as Anthropic.ContentBlockParam[]
    expect(last[2]).toEqual({ ...(history[2]!.content as object[])[2], cache_control: E })
  })

  test('markers in documents and images count; a "cache_control" key inside a tool input is data, not a marker', () => {
    const history: Anthropic.MessageParam[] = [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'content', content: [text('page 1', { type: 'ephemeral' })] } },
          { type: 'image', source: { type: 'url', url: 'https://example.invalid/a.png' }, cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'save', input: { cache_control: { type: 'ephemeral' } } }] },
    ]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, snapshot: false })
    // 2 caller markers + the history breakpoint (on the tool_use) + the latest system breakpoint.
    expect(markersOf(request)).toHaveLength(4)
    expect(request.system.map((block) => block.cache_control !== undefined)).toEqual([false, true, false])
    expect((request.messages[1]!.content as Anthropic.ContentBlockParam[])[0]).toMatchObject({ type: 'tool_use', cache_control: E })
  })

  test("the caller's markers are never moved, removed or changed, even when none of promptloom's fit", () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: [text('a', { type: 'ephemeral', ttl: '1h' }), text('b', { type: 'ephemeral' })] },
      { role: 'assistant', content: [text('c', { type: 'ephemeral' })] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: [text('d', { type: 'ephemeral' })] }] },
    ]
    const copy = structuredClone(history)
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(markersOf(request)).toHaveLength(4)
    expect(request.messages.slice(0, 2)).toEqual(copy.slice(0, 2))
    expect(request.messages[2]).toEqual({ role: 'user', content: [...(copy[2]!.content as object[]), { type: 'text', text: SNAPSHOT }] })
    expect(history).toEqual(copy)
  })

  test('priority: the history breakpoint, then system breakpoints latest first, then the tools marker', () => {
    const five = promptOf(['a', 'b', 'c', 'd'].map((name) => [name, name.toUpperCase(), 'static', true] as const))
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: five, messages: history })
    expect(request.system.map((block) => block.cache_control !== undefined)).toEqual([false, true, true, true])
    expect(request.tools.at(-1)).not.toHaveProperty('cache_control')
    expect((request.messages[0]!.content as Anthropic.TextBlockParam[])[0]).toEqual(text('Go.', { type: 'ephemeral' }))
  })

  test('no history breakpoint for an empty history, with historyBreakpoint: false, or when the last block is already marked', () => {
    expect(markersOf(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: [] }))).toHaveLength(3)
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }]
    expect(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, historyBreakpoint: false }).messages[0]).toEqual({
      role: 'user',
      content: [text('Go.'), text(SNAPSHOT)],
    })
    const marked: Anthropic.MessageParam[] = [{ role: 'user', content: [text('Go.', { type: 'ephemeral', ttl: '1h' })] }]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: marked })
    expect(request.messages[0]).toEqual({ role: 'user', content: [text('Go.', { type: 'ephemeral', ttl: '1h' }), text(SNAPSHOT)] })
  })

  test('the history breakpoint skips blocks that cannot carry a marker (thinking, empty text)', () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Go.' },
      { role: 'assistant', content: [text('Done.'), { type: 'thinking', thinking: 'hm', signature: 's' }, text('')] },
    ]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(request.messages[1]!.content).toEqual([text('Done.', { type: 'ephemeral' }), { type: 'thinking', thinking: 'hm', signature: 's' }, text('')])
  })
})

describe('toAnthropic: ttl', () => {
  const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }]
  const ttlsOf = (request: AnthropicRequest<Anthropic.MessageParam>) => markersOf(request).map((marker) => (marker as { ttl?: string }).ttl ?? 'none')

  test("a string applies to every promptloom marker; none written by default", () => {
    expect(ttlsOf(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, ttl: '1h' }))).toEqual(['1h', '1h', '1h', '1h'])
    expect(ttlsOf(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }))).toEqual(['none', 'none', 'none', 'none'])
  })

  test('the object form picks by the marked block: static (and the tools), session, history', () => {
    // PROMPT: [static*][session*][volatile]
    expect(ttlsOf(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, ttl: { static: '1h', session: '5m' } }))).toEqual(['1h', '1h', '5m', 'none'])
  })

  test('each marker is raised to the longest TTL after it (a 1h history marker lifts everything before it)', () => {
    expect(ttlsOf(toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, ttl: { history: '1h' } }))).toEqual(['1h', '1h', '1h', '1h'])
  })

  test("then lowered to the shortest caller TTL before it: promptloom's 1h history marker after a caller's 5-minute one is 5m", () => {
    const withCaller: Anthropic.MessageParam[] = [{ role: 'user', content: [text('old', { type: 'ephemeral' })] }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'Go.' }]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: withCaller, ttl: '1h' })
    // The caller's marker takes one slot, so the tools marker is dropped: system 1h, 1h; caller 5m; history lowered to 5m.
    expect(markersOf(request)).toEqual([H1, H1, E, M5])
  })

  test("a caller's 1h marker after promptloom's default markers raises them, so the request stays valid", () => {
    const withCaller: Anthropic.MessageParam[] = [{ role: 'user', content: [text('old', { type: 'ephemeral', ttl: '1h' })] }, { role: 'user', content: 'Go.' }]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: withCaller, snapshot: false, historyBreakpoint: false })
    expect(markersOf(request)).toEqual([H1, H1, H1, H1])
  })

  test("a history whose own markers are out of order is a TypeError naming the message index; a bad ttl names ttl", () => {
    const bad: Anthropic.MessageParam[] = [{ role: 'user', content: [text('a', { type: 'ephemeral' })] }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [text('b', { type: 'ephemeral', ttl: '1h' })] }]
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: bad })).toThrow(/toAnthropic option "messages" has a cache marker with ttl '1h' at index 2 after a 5-minute one at index 0/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], ttl: '2h' as never })).toThrow(/toAnthropic option "ttl" must be '5m', '1h' or/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], ttl: { volatile: '1h' } as never })).toThrow(/option "ttl" has an unknown key "volatile"/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], ttl: { history: 5 } as never })).toThrow(/option "ttl.history" must be '5m' or '1h' \(got number 5\)/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [], historyBreakpoint: 'yes' as never })).toThrow(/option "historyBreakpoint" must be a boolean/)
  })
})

describe('toAnthropic: a trailing mid-conversation system message', () => {
  test('the snapshot goes into the user turn before it, the history breakpoint right before the snapshot; the system message stays last', () => {
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }, { role: 'system', content: 'From now on, answer in French.' }]
    const { messages } = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(messages).toEqual([{ role: 'user', content: [text('Go.', { type: 'ephemeral' }), text(SNAPSHOT)] }, history[1]])
  })

  test('after an assistant turn the snapshot is a new user message before the system message', () => {
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }, { role: 'assistant', content: 'Done.' }, { role: 'system', content: 'Be brief.' }]
    const { messages } = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, historyBreakpoint: false })
    expect(messages).toEqual([history[0], history[1], { role: 'user', content: [text(SNAPSHOT)] }, history[2]])
  })
})

describe('historyOf(toAnthropic(...))', () => {
  test('is the caller history with the snapshot where the request put it and none of promptloom’s markers', () => {
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }, { role: 'assistant', content: [text('Reading.')] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }]
    const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history })
    expect(markersOf(request)).toHaveLength(4)
    expect(historyOf(request)).toEqual([history[0], history[1], { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }, text(SNAPSHOT)] }])
    expect(historyOf(request, { snapshot: false })).toEqual(history)
    expect(historyOf(request)[0]).toBe(history[0])
  })

  test('fed back step after step, the history never piles up markers: each request has at most the history breakpoint of its own', () => {
    let history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Go.' }]
    for (let step = 0; step < 6; step++) {
      const request = toAnthropic({ assembly: ASSEMBLY, rendered: PROMPT, messages: history, snapshot: step % 2 === 0 ? `snapshot ${step}` : false })
      expect(markersOf(request)).toHaveLength(4)
      history = [...historyOf(request), { role: 'assistant', content: `reply ${step}` }, { role: 'user', content: `next ${step}` }]
    }
    expect(JSON.stringify(history)).not.toContain('cache_control')
  })

  test('a copy of a request, or anything else, is a TypeError saying to keep the returned object', () => {
    const request = toAnthropic({ assembly: ASSEMBLY, messages: [] })
    expect(() => historyOf({ ...request })).toThrow(/historyOf expects the request object returned by toAnthropic/)
    expect(() => historyOf(undefined as never)).toThrow(/\(got undefined\)/)
    expect(() => historyOf(request, { snapshot: 'no' as never })).toThrow(/historyOf option "snapshot" must be a boolean/)
  })
})

describe('toAnthropic: bad tools and history elements', () => {
  test('a tool schema without parameters, or with null, is a TypeError naming the tool', () => {
    const missing = assemblyOf([['a', 'A']], { tools: [{ name: 'ping', description: 'Ping.' } as never] })
    expect(() => toAnthropic({ assembly: missing, messages: [] })).toThrow(/toAnthropic option "assembly" has tool "ping" whose parameters are undefined; a tool's parameters must be a JSON Schema object/)
    const nulled = assemblyOf([['a', 'A']], { tools: [tool('read'), { name: 'ping', description: 'Ping.', parameters: null } as never] })
    expect(() => toAnthropic({ assembly: nulled, messages: [] })).toThrow(/tool "ping" whose parameters are null/)
    expect(() => toAnthropic({ assembly: assemblyOf([], { tools: [null as never] }), messages: [] })).toThrow(/has null as tool 0/)
  })

  test('a null history element and a non-iterable content are TypeErrors naming the index; no message reads "undefined undefined"', () => {
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [{ role: 'user', content: 'a' }, null as never] })).toThrow(/toAnthropic option "messages" has null at index 1/)
    expect(() => toAnthropic({ assembly: ASSEMBLY, messages: [{ role: 'user', content: 5 as never }] })).toThrow(/message at index 0 whose content is number 5/)
    let message = ''
    try {
      toAnthropic({ assembly: ASSEMBLY, messages: [{ role: 'user' } as never] })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(/content is undefined;/)
    expect(message).not.toContain('undefined undefined')
  })
})
