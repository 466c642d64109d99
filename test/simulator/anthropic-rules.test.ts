import { countTokens } from 'gpt-tokenizer'
import { describe, expect, test } from 'vitest'
import { createCacheSimulator, type CacheSimulator, type SimulatedExchange } from '../../examples/simulator/index.js'

// Anthropic's documented caching rules, one request pair per rule: the first request's usage and the
// second's, as [read, 5m write, 1h write, uncached input] tokens. Text is ' <word>' repeated, one
// o200k token per repetition, so a block of `filler(n)` counts n tokens.

type Ttl = '5m' | '1h'
type Usage = readonly [read: number, write5m: number, write1h: number, input: number]
type Block = { type: 'text'; text: string; cache_control?: { type: 'ephemeral'; ttl?: Ttl } }
type Message = { role: 'user' | 'assistant'; content: string | Block[] }
type Tool = { name: string; description: string; input_schema: { type: 'object' }; cache_control?: { type: 'ephemeral'; ttl?: Ttl } }
interface Body {
  model?: string
  tools?: Tool[]
  system?: Block[]
  messages: Message[]
  cache_control?: { type: 'ephemeral'; ttl?: Ttl }
}

const MINUTE = 60_000

function filler(tokens: number, word = 'apple'): string {
  return ` ${word}`.repeat(tokens)
}

/** A text block of `tokens` tokens; `ttl` puts a cache_control marker on it ('' for one without a ttl). */
function text(tokens: number, word = 'apple', ttl?: Ttl | ''): Block {
  const block: Block = { type: 'text', text: filler(tokens, word) }
  if (ttl !== undefined) block.cache_control = ttl === '' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl }
  return block
}

function marked(block: Block, ttl: Ttl | '' = ''): Block {
  return { ...block, cache_control: ttl === '' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl } }
}

function user(tokens: number, word = 'pear'): Message {
  return { role: 'user', content: filler(tokens, word) }
}

/** `count` blocks of 5 tokens each, the one at each (1-based) position in `markers` marked. */
function blocks(count: number, markers: readonly number[] = []): Block[] {
  return Array.from({ length: count }, (_, index) => (markers.includes(index + 1) ? marked(text(5, 'plum')) : text(5, 'plum')))
}

const TOOL_A: Tool = { name: 'read', description: filler(40, 'tool'), input_schema: { type: 'object' } }
const TOOL_B: Tool = { ...TOOL_A, description: filler(41, 'tool') }
/** A tool block counts the tokens of its canonical JSON (keys sorted). */
const TOOL_A_TOKENS = countTokens(JSON.stringify({ description: TOOL_A.description, input_schema: { type: 'object' }, name: 'read' }))

function send(sim: CacheSimulator, body: Body): SimulatedExchange {
  return sim.handle('/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 64, ...body })
}

function usageOf(exchange: SimulatedExchange): Usage {
  expect(exchange.status, JSON.stringify(exchange.response)).toBe(200)
  const usage = exchange.response.usage as Record<string, number> & { cache_creation: Record<string, number> }
  expect(usage.cache_creation_input_tokens).toBe(usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens)
  return [usage.cache_read_input_tokens, usage.cache_creation.ephemeral_5m_input_tokens, usage.cache_creation.ephemeral_1h_input_tokens, usage.input_tokens]
}

interface Row {
  readonly rule: string
  readonly first: Body
  readonly wait?: number
  readonly second: Body
  readonly expected: readonly [first: Usage, second: Usage]
}

const conversation = (count: number, markers: readonly number[]): Body => ({ system: [text(1100)], messages: [{ role: 'user', content: blocks(count, markers) }] })

const ROWS: readonly Row[] = [
  {
    rule: 'a marker writes the prefix through its block, and the next request reads it',
    first: { system: [text(1200, 'apple', '')], messages: [user(10)] },
    second: { system: [text(1200, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 1200, 0, 10],
      [1200, 0, 0, 20],
    ],
  },
  {
    rule: 'without a marker nothing is written or read, however identical the prefix',
    first: { system: [text(1200)], messages: [user(10)] },
    second: { system: [text(1200)], messages: [user(20)] },
    expected: [
      [0, 0, 0, 1210],
      [0, 0, 0, 1220],
    ],
  },
  {
    rule: "a prefix under the model's minimum (claude-sonnet-4-6: 1024) is not cached",
    first: { system: [text(1000, 'apple', '')], messages: [user(10)] },
    second: { system: [text(1000, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 0, 0, 1010],
      [0, 0, 0, 1020],
    ],
  },
  {
    rule: 'the minimum counts the whole prefix through the marker, tools first',
    first: { tools: [TOOL_A], system: [text(1000, 'apple', '')], messages: [user(10)] },
    second: { tools: [TOOL_A], system: [text(1000, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, TOOL_A_TOKENS + 1000, 0, 10],
      [TOOL_A_TOKENS + 1000, 0, 0, 20],
    ],
  },
  {
    rule: 'claude-opus-4-6 needs 4096 tokens: 4000 are not cached',
    first: { model: 'claude-opus-4-6', system: [text(4000, 'apple', '')], messages: [user(10)] },
    second: { model: 'claude-opus-4-6', system: [text(4000, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 0, 0, 4010],
      [0, 0, 0, 4020],
    ],
  },
  {
    rule: 'claude-opus-4-6 caches 4100 tokens',
    first: { model: 'claude-opus-4-6', system: [text(4100, 'apple', '')], messages: [user(10)] },
    second: { model: 'claude-opus-4-6', system: [text(4100, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 4100, 0, 10],
      [4100, 0, 0, 20],
    ],
  },
  {
    rule: 'an unknown model gets the most conservative minimum (4096)',
    first: { model: 'claude-unreleased-9', system: [text(4000, 'apple', '')], messages: [user(10)] },
    second: { model: 'claude-unreleased-9', system: [text(4000, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 0, 0, 4010],
      [0, 0, 0, 4020],
    ],
  },
  {
    rule: "a dated snapshot id uses its model's minimum (claude-sonnet-4-5-20250929: 1024)",
    first: { model: 'claude-sonnet-4-5-20250929', system: [text(1100, 'apple', '')], messages: [user(10)] },
    second: { model: 'claude-sonnet-4-5-20250929', system: [text(1100, 'apple', '')], messages: [user(20)] },
    expected: [
      [0, 1100, 0, 10],
      [1100, 0, 0, 20],
    ],
  },
  {
    rule: 'the lookback finds the earlier write 19 blocks before the breakpoint (20 positions, the breakpoint first)',
    first: conversation(10, [10]),
    second: conversation(29, [29]),
    expected: [
      [0, 1100 + 50, 0, 0],
      [1100 + 50, 19 * 5, 0, 0],
    ],
  },
  {
    rule: 'the lookback misses the earlier write 20 blocks before the breakpoint',
    first: conversation(10, [10]),
    second: conversation(30, [30]),
    expected: [
      [0, 1100 + 50, 0, 0],
      [0, 1100 + 150, 0, 0],
    ],
  },
  {
    rule: 'a second breakpoint opens its own 20-block window',
    first: conversation(10, [10]),
    second: conversation(40, [10, 40]),
    expected: [
      [0, 1100 + 50, 0, 0],
      [1100 + 50, 30 * 5, 0, 0],
    ],
  },
  {
    rule: 'a marker on a block that changes every request writes every time and never reads',
    first: { system: [text(1100), text(10, 'one', '')], messages: [user(10)] },
    second: { system: [text(1100), text(10, 'two', '')], messages: [user(10)] },
    expected: [
      [0, 1110, 0, 10],
      [0, 1110, 0, 10],
    ],
  },
  {
    rule: 'a changed tool invalidates the system prompt and the messages after it',
    first: { tools: [TOOL_A], system: [text(1100, 'apple', '')], messages: [user(10)] },
    second: { tools: [TOOL_B], system: [text(1100, 'apple', '')], messages: [user(10)] },
    expected: [
      [0, TOOL_A_TOKENS + 1100, 0, 10],
      [0, TOOL_A_TOKENS + 1 + 1100, 0, 10],
    ],
  },
  {
    rule: 'caches are per model',
    first: { model: 'claude-sonnet-4-6', system: [text(1100, 'apple', '')], messages: [user(10)] },
    second: { model: 'claude-opus-4-8', system: [text(1100, 'apple', '')], messages: [user(10)] },
    expected: [
      [0, 1100, 0, 10],
      [0, 1100, 0, 10],
    ],
  },
  {
    rule: 'a top-level cache_control marks the last block and moves forward with the conversation',
    first: { cache_control: { type: 'ephemeral' }, system: [text(1100)], messages: [user(10)] },
    second: { cache_control: { type: 'ephemeral' }, system: [text(1100)], messages: [user(10), { role: 'assistant', content: filler(5, 'fig') }, user(7, 'kiwi')] },
    expected: [
      [0, 1110, 0, 0],
      [1110, 12, 0, 0],
    ],
  },
  {
    rule: 'writes split at the last 1h breakpoint: 1h up to it, 5m after it',
    first: { system: [text(1100, 'apple', '1h'), text(200, 'plum', '5m')], messages: [user(10)] },
    second: { system: [text(1100, 'apple', '1h'), text(200, 'plum', '5m')], messages: [user(20)] },
    expected: [
      [0, 200, 1100, 10],
      [1300, 0, 0, 20],
    ],
  },
  {
    rule: 'a 5m entry is read 4 minutes 59.999 seconds later',
    first: { system: [text(1200, 'apple', '')], messages: [user(10)] },
    wait: 5 * MINUTE - 1,
    second: { system: [text(1200, 'apple', '')], messages: [user(10)] },
    expected: [
      [0, 1200, 0, 10],
      [1200, 0, 0, 10],
    ],
  },
  {
    rule: 'a 5m entry has expired 5 minutes later',
    first: { system: [text(1200, 'apple', '')], messages: [user(10)] },
    wait: 5 * MINUTE,
    second: { system: [text(1200, 'apple', '')], messages: [user(10)] },
    expected: [
      [0, 1200, 0, 10],
      [0, 1200, 0, 10],
    ],
  },
  {
    rule: 'a 1h entry is read 59 minutes later',
    first: { system: [text(1200, 'apple', '1h')], messages: [user(10)] },
    wait: 59 * MINUTE,
    second: { system: [text(1200, 'apple', '1h')], messages: [user(10)] },
    expected: [
      [0, 0, 1200, 10],
      [1200, 0, 0, 10],
    ],
  },
  {
    rule: 'a 1h entry has expired an hour later',
    first: { system: [text(1200, 'apple', '1h')], messages: [user(10)] },
    wait: 60 * MINUTE,
    second: { system: [text(1200, 'apple', '1h')], messages: [user(10)] },
    expected: [
      [0, 0, 1200, 10],
      [0, 0, 1200, 10],
    ],
  },
]

describe('the simulated Anthropic cache', () => {
  test.each(ROWS)('$rule', ({ first, wait = 0, second, expected }) => {
    const sim = createCacheSimulator()
    const one = usageOf(send(sim, first))
    sim.advance(wait)
    const two = usageOf(send(sim, second))
    expect([one, two]).toEqual(expected)
  })

  test('a read refreshes the entry: read at 4 and 8 minutes, expired 5 minutes after the last read', () => {
    const sim = createCacheSimulator()
    const body: Body = { system: [text(1200, 'apple', '')], messages: [user(10)] }
    const reads: number[] = []
    for (const wait of [0, 4 * MINUTE, 4 * MINUTE, 5 * MINUTE]) {
      sim.advance(wait)
      reads.push(usageOf(send(sim, body))[0])
    }
    expect(reads).toEqual([0, 1200, 1200, 0])
  })

  test('the prompt and the cached prefix are split into tools, system and messages, in that order', () => {
    const sim = createCacheSimulator()
    const body: Body = { tools: [TOOL_A], system: [text(1200, 'apple', '')], messages: [user(10), { role: 'assistant', content: 'ok' }, { role: 'user', content: [text(7, 'fig', '')] }] }
    const first = send(sim, body)
    expect(first.promptTokensBySection).toEqual({ tools: TOOL_A_TOKENS, system: 1200, messages: 18 })
    expect(first.cachedTokensBySection).toEqual({ tools: 0, system: 0, messages: 0 })
    // The same history with a longer last turn: the read stops at the first request's system marker
    // (its history marker's prefix is not in this request), so it covers the tools and the system.
    const second = send(sim, { ...body, messages: [user(10), { role: 'assistant', content: 'ok' }, { role: 'user', content: [text(9, 'fig', '')] }] })
    expect(second.cachedTokensBySection).toEqual({ tools: TOOL_A_TOKENS, system: 1200, messages: 0 })
    const third = send(sim, { ...body, messages: [...body.messages, { role: 'assistant', content: 'done' }, { role: 'user', content: [text(3, 'kiwi', '')] }] })
    expect(third.cachedTokensBySection).toEqual({ tools: TOOL_A_TOKENS, system: 1200, messages: 18 })
    expect(third.cachedTokens).toBe(TOOL_A_TOKENS + 1218)
  })

  test('an injected clock drives expiry, and advance adds to it', () => {
    let clock = 1_000_000
    const sim = createCacheSimulator({ now: () => clock })
    const body: Body = { system: [text(1200, 'apple', '')], messages: [user(10)] }
    send(sim, body)
    clock += 4 * MINUTE
    sim.advance(MINUTE - 1)
    expect(usageOf(send(sim, body))[0]).toBe(1200)
    expect(sim.now()).toBe(1_000_000 + 5 * MINUTE - 1)
    expect(sim.requests.map((exchange) => exchange.at)).toEqual([1_000_000, 1_000_000 + 5 * MINUTE - 1])
  })

  test('advance takes a finite number of milliseconds ≥ 0', () => {
    const sim = createCacheSimulator()
    expect(() => sim.advance(-1)).toThrow(TypeError)
    expect(() => sim.advance(Number.NaN)).toThrow(/finite number of milliseconds/)
  })
})

describe('the simulated Anthropic request checks', () => {
  function rejection(body: Body): string {
    const exchange = send(createCacheSimulator(), body)
    expect(exchange.status).toBe(400)
    const { error } = exchange.response as { error: { type: string; message: string } }
    expect(error.type).toBe('invalid_request_error')
    return error.message
  }

  test('five markers are a 400', () => {
    expect(rejection({ system: [1, 2, 3, 4, 5].map((n) => text(n, 'apple', '')), messages: [user(1)] })).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    )
  })

  test('markers nested in tool_result contents count toward the four', () => {
    const toolResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: [text(3, 'fig', ''), text(3, 'kiwi', '')] }
    const body = {
      system: [text(1, 'apple', ''), text(2, 'apple', ''), text(3, 'apple', '')],
      messages: [user(1), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] }, { role: 'user', content: [toolResult] }],
    }
    expect(rejection(body as unknown as Body)).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.')
  })

  test('a top-level cache_control takes a fifth slot when four blocks are marked', () => {
    expect(rejection({ cache_control: { type: 'ephemeral' }, system: [1, 2, 3, 4].map((n) => text(n, 'apple', '')), messages: [user(1)] })).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    )
  })

  test('a 1h marker after a 5m one in prefix order (tools → system → messages) is a 400', () => {
    const message = rejection({ tools: [{ ...TOOL_A, cache_control: { type: 'ephemeral', ttl: '5m' } }], system: [text(10, 'apple', '1h')], messages: [user(1)] })
    expect(message).toMatch(/^A ttl='1h' cache_control block \(system\.0\.cache_control\) must not come after a ttl='5m' cache_control block \(tools\.0\.cache_control\)/)
  })

  test('a marker without a ttl is a 5m marker for the order rule', () => {
    expect(rejection({ system: [text(10, 'apple', ''), text(10, 'plum', '1h')], messages: [user(1)] })).toMatch(/ttl='1h'.*must not come after a ttl='5m'/)
  })

  test('an unknown ttl is a 400 naming the field', () => {
    const body = { system: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '10m' } }], messages: [user(1)] }
    expect(rejection(body as unknown as Body)).toBe("system.0.cache_control.ttl: Input should be '5m' or '1h'")
  })

  test('a rejected request writes nothing', () => {
    const sim = createCacheSimulator()
    const body: Body = { system: [text(1200, 'apple', '1h'), text(10, 'plum', '')], messages: [user(10)] }
    expect(send(sim, { ...body, system: [text(1200, 'apple', '5m'), text(10, 'plum', '1h')] }).status).toBe(400)
    expect(usageOf(send(sim, body))).toEqual([0, 10, 1200, 10])
  })
})
