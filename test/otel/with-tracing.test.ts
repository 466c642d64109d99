import { context, diag, DiagLogLevel, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AlwaysOffSampler, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, test, vi } from 'vitest'
import type { StepResult, StepSurface } from '../../src/index.js'
import { STEP_SPAN, USAGE_EVENT, withTracing } from '../../src/otel.js'
import { agentWorld, createStepSurface, FIGURES, inMemoryTracing, POLICY_TEXT, ROLE_TEXT, spansNamed } from './tracing.fixtures.js'

// promptloom/otel (SPEC §6 "OpenTelemetry") against the real SDK and its in-memory exporter.

/** 64-bit FNV-1a of the UTF-8 bytes, written with BigInt (independent of the implementation's two 32-bit halves). */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n
  for (const byte of new TextEncoder().encode(text)) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
  return hash.toString(16).padStart(16, '0')
}

function instructionsOf(span: ReadableSpan): unknown {
  return JSON.parse(span.attributes['gen_ai.system_instructions'] as string)
}

afterEach(() => {
  context.disable()
  diag.disable()
})

test('the oracle hash is FNV-1a 64 (the published vectors for "" and "a")', () => {
  expect(fnv1a64('')).toBe('cbf29ce484222325')
  expect(fnv1a64('a')).toBe('af63dc4c8601ec8c')
})

describe('a step span', () => {
  test('each step is one promptloom.step span with the agent, step number, prefix figures and tools_changed from its step result', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer, agent: 'agent-1' })
    const results: StepResult[] = []
    for (let i = 0; i < 3; i++) {
      results.push(traced.step({ assembly: await world.assemble() }))
      traced.observeUsage({ inputTokens: 200, cachedInputTokens: 0 })
    }
    const spans = spansNamed(exporter, STEP_SPAN)
    expect(spans).toHaveLength(3)
    spans.forEach((span, i) => {
      const result = results[i]!
      expect(span.attributes).toMatchObject({
        'promptloom.agent': 'agent-1',
        'promptloom.step': i + 1,
        'promptloom.stable_prefix_tokens': result.stablePrefixTokens,
        'promptloom.reusable_prefix_tokens': result.reusablePrefixTokens,
        'promptloom.prompt_tokens': result.promptTokens,
        'promptloom.expected_cached_tokens': result.expectedCachedTokens,
        'promptloom.tools_changed': false,
      })
    })
    // The figures are the step's own, not constants: 0 on the first step, the whole unchanged prompt after.
    expect(spans.map((span) => span.attributes['promptloom.reusable_prefix_tokens'])).toEqual([0, results[1]!.promptTokens, results[2]!.promptTokens])
    expect(spans[1]!.attributes['promptloom.expected_cached_tokens']).toBeGreaterThan(0)
  })

  test('gen_ai.system_instructions lists each part with its name, layer label, stability and content hash, as generic parts without text', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.end()
    const part = (name: string, layer: string, stability: string, text: string) => ({
      type: 'generic',
      generic_type: 'promptloom.section',
      name,
      layer,
      stability,
      content_hash: fnv1a64(text),
    })
    expect(instructionsOf(spansNamed(exporter, STEP_SPAN)[0]!)).toEqual([
      part('policy', 'global', 'static', POLICY_TEXT),
      part('repo', 'global', 'session', 'On branch main.'),
      part('role', 'agent-1', 'session', ROLE_TEXT),
    ])
  })

  test('no part text reaches any span, attribute or event by default', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer, agent: 'agent-1' })
    traced.step({ assembly: await world.assemble() })
    world.branch.value = 'release'
    traced.step({ assembly: await world.assemble() })
    traced.observeUsage({ inputTokens: 90, cachedInputTokens: 40 })
    traced.observeUsage({ inputTokens: 90, cachedInputTokens: 40 })
    const exported = JSON.stringify(exporter.getFinishedSpans().map((span) => [span.name, span.attributes, span.events]))
    expect(exporter.getFinishedSpans().length).toBe(3)
    for (const text of [POLICY_TEXT, ROLE_TEXT, 'On branch main.', 'On branch release.']) expect(exported).not.toContain(text)
  })

  test('with recordContent: true each part is a text part whose content is the part text, in prompt order', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer, recordContent: true })
    const result = traced.step({ assembly: await world.assemble() })
    traced.end()
    const parts = instructionsOf(spansNamed(exporter, STEP_SPAN)[0]!) as { type: string; content: string; name: string; content_hash: string }[]
    expect(parts.map((item) => item.type)).toEqual(['text', 'text', 'text'])
    expect(parts.map((item) => item.content)).toEqual(result.rendered.parts.map((item) => item.text))
    expect(parts.map((item) => item.content).join('\n\n')).toBe(result.rendered.text)
    expect(parts.map((item) => item.content_hash)).toEqual(parts.map((item) => fnv1a64(item.content)))
  })

  test('a changed part gets a new content hash and the unchanged ones keep theirs', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer })
    traced.step({ assembly: await world.assemble() })
    world.branch.value = 'release'
    traced.step({ assembly: await world.assemble() })
    traced.end()
    const [first, second] = spansNamed(exporter, STEP_SPAN).map((span) => (instructionsOf(span) as { content_hash: string }[]).map((item) => item.content_hash))
    expect(second).toEqual([first![0], fnv1a64('On branch release.'), first![2]])
  })

  test('a step hashes only the parts that are new to the surface (an unchanged prompt hashes none)', async () => {
    const { tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer })
    const encode = vi.spyOn(TextEncoder.prototype, 'encode')
    const encodedBy = async (change: () => void) => {
      change()
      const assembly = await world.assemble()
      encode.mockClear()
      traced.step({ assembly })
      return encode.mock.calls.map(([text]) => text)
    }
    try {
      expect(await encodedBy(() => {})).toEqual([POLICY_TEXT, 'On branch main.', ROLE_TEXT])
      expect(await encodedBy(() => {})).toEqual([])
      expect(await encodedBy(() => void (world.branch.value = 'release'))).toEqual(['On branch release.'])
    } finally {
      encode.mockRestore()
      traced.end()
    }
  })

  test('figures the step result does not have are left out, not written as 0', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.end()
    const keys = Object.keys(spansNamed(exporter, STEP_SPAN)[0]!.attributes).sort()
    expect(keys).toEqual(['gen_ai.system_instructions', 'promptloom.step', 'promptloom.tools_changed'])
  })

  test('promptloom.tools_changed and promptloom.withheld follow the step result (a budget withholds a section)', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const budget = { maxTokens: 70, countTokens: (text: string) => text.length }
    const traced = withTracing(createStepSurface({ budget }), { tracer })
    const first = traced.step({ assembly: await world.assemble() })
    world.app.systemPrompt.tools(() => ({ schemas: [{ name: 'grep', description: 'Search.', parameters: { type: 'object' } }] }))
    const second = traced.step({ assembly: await world.assemble() })
    traced.end()
    expect(first.withheld!.length).toBeGreaterThan(0)
    const spans = spansNamed(exporter, STEP_SPAN)
    expect(spans.map((span) => span.attributes['promptloom.withheld'])).toEqual([[...first.withheld!], [...second.withheld!]])
    expect(spans.map((span) => span.attributes['promptloom.tools_changed'])).toEqual([false, true])
  })
})

describe('the cache-break attributes', () => {
  /** The surface with a cache break on step 2, as the step surface reports one. */
  function breakingAt2(inner: StepSurface, key: object): StepSurface {
    return {
      step: (input) => {
        const result = inner.step(input)
        return result.step === 2 ? { ...result, cacheBreak: { cause: 'section', section: 'role', layer: key, variable: 'branch' } } : result
      },
      observeUsage: (usage) => inner.observeUsage(usage),
    }
  }

  test('are on the step that lost reuse only, with the layer as its label', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(breakingAt2(createStepSurface(FIGURES), world.key), { tracer })
    for (let i = 0; i < 3; i++) traced.step({ assembly: await world.assemble() })
    traced.end()
    const broke = spansNamed(exporter, STEP_SPAN).map((span) =>
      Object.fromEntries(Object.entries(span.attributes).filter(([key]) => key.startsWith('promptloom.cache_break.'))),
    )
    expect(broke).toEqual([
      {},
      {
        'promptloom.cache_break.cause': 'section',
        'promptloom.cache_break.section': 'role',
        'promptloom.cache_break.layer': 'agent-1',
        'promptloom.cache_break.variable': 'branch',
      },
      {},
    ])
  })

  test('a tools break lists the added, removed and changed tool names', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const inner = createStepSurface()
    const surface: StepSurface = {
      step: (input) => ({ ...inner.step(input), cacheBreak: { cause: 'tools', tools: { added: ['grep'], removed: [], changed: ['bash', 'read'] } } }),
      observeUsage: (usage) => inner.observeUsage(usage),
    }
    const traced = withTracing(surface, { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.end()
    expect(spansNamed(exporter, STEP_SPAN)[0]!.attributes).toMatchObject({
      'promptloom.cache_break.cause': 'tools',
      'promptloom.cache_break.tools.added': ['grep'],
      'promptloom.cache_break.tools.removed': [],
      'promptloom.cache_break.tools.changed': ['bash', 'read'],
    })
  })
})

describe('usage', () => {
  test('observeUsage adds the gen_ai.usage.* attributes to the step span and ends it', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer })
    traced.step({ assembly: await world.assemble() })
    expect(spansNamed(exporter, STEP_SPAN)).toHaveLength(0)
    traced.observeUsage({ inputTokens: 1200, cachedInputTokens: 1000, cacheWriteTokens: 150 })
    const [span] = spansNamed(exporter, STEP_SPAN)
    expect(span!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.usage.cache_creation.input_tokens': 150,
    })
  })

  test('without a cache write figure, gen_ai.usage.cache_creation.input_tokens is left out', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.observeUsage({ inputTokens: 50, cachedInputTokens: 0 })
    expect(Object.keys(spansNamed(exporter, STEP_SPAN)[0]!.attributes)).not.toContain('gen_ai.usage.cache_creation.input_tokens')
  })

  test('a step span left open ends at the next step, and end() ends the last one (once)', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.step({ assembly: await world.assemble() })
    expect(spansNamed(exporter, STEP_SPAN).map((span) => span.attributes['promptloom.step'])).toEqual([1])
    traced.end()
    traced.end()
    expect(spansNamed(exporter, STEP_SPAN).map((span) => span.attributes['promptloom.step'])).toEqual([1, 2])
  })

  test('usage reported after its step span ended is a promptloom.usage span naming the agent and step', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer, agent: 'agent-1' })
    traced.step({ assembly: await world.assemble() })
    traced.observeUsage({ inputTokens: 50, cachedInputTokens: 0 })
    traced.observeUsage({ inputTokens: 70, cachedInputTokens: 20 })
    expect(spansNamed(exporter, USAGE_EVENT).map((span) => span.attributes)).toEqual([
      { 'promptloom.agent': 'agent-1', 'promptloom.step': 1, 'gen_ai.usage.input_tokens': 70, 'gen_ai.usage.cache_read.input_tokens': 20 },
    ])
  })

  test('usage reported after its step span ended is an event on the active span when one records', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    traced.step({ assembly: await world.assemble() })
    traced.end()
    tracer.startActiveSpan('retry', (host) => {
      traced.observeUsage({ inputTokens: 70, cachedInputTokens: 20 })
      host.end()
    })
    const [host] = spansNamed(exporter, 'retry')
    expect(host!.events.map((event) => [event.name, event.attributes])).toEqual([
      [USAGE_EVENT, { 'promptloom.step': 1, 'gen_ai.usage.input_tokens': 70, 'gen_ai.usage.cache_read.input_tokens': 20 }],
    ])
    expect(spansNamed(exporter, USAGE_EVENT)).toHaveLength(0)
  })
})

describe('an active span', () => {
  test("by default ('child') a step's span is a child of the active span", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    const assembly = await world.assemble()
    tracer.startActiveSpan('agent turn', (host) => {
      traced.step({ assembly })
      traced.observeUsage({ inputTokens: 10, cachedInputTokens: 0 })
      host.end()
    })
    const [step] = spansNamed(exporter, STEP_SPAN)
    const [host] = spansNamed(exporter, 'agent turn')
    expect(step!.parentSpanContext?.spanId).toBe(host!.spanContext().spanId)
    expect(host!.events).toEqual([])
  })

  test("with activeSpan: 'events' a step is a promptloom.step event on it and its usage goes on it; no span of its own", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(FIGURES), { tracer, agent: 'agent-1', activeSpan: 'events' })
    const assembly = await world.assemble()
    tracer.startActiveSpan('chat', (host) => {
      traced.step({ assembly })
      traced.observeUsage({ inputTokens: 300, cachedInputTokens: 200 })
      host.end()
    })
    expect(spansNamed(exporter, STEP_SPAN)).toEqual([])
    const [host] = spansNamed(exporter, 'chat')
    expect(host!.events.map((event) => event.name)).toEqual([STEP_SPAN])
    expect(host!.events[0]!.attributes).toMatchObject({ 'promptloom.agent': 'agent-1', 'promptloom.step': 1, 'promptloom.tools_changed': false })
    expect(JSON.parse(host!.events[0]!.attributes!['gen_ai.system_instructions'] as string)).toHaveLength(3)
    expect(host!.attributes).toEqual({ 'gen_ai.usage.input_tokens': 300, 'gen_ai.usage.cache_read.input_tokens': 200 })
  })

  test("with activeSpan: 'events' and no active span, a step gets a span of its own", async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer, activeSpan: 'events' })
    traced.step({ assembly: await world.assemble() })
    traced.end()
    expect(spansNamed(exporter, STEP_SPAN)).toHaveLength(1)
  })
})

describe('the surface is unchanged', () => {
  test('step and observeUsage return the surface\'s own results, and a sampled-out step exports nothing', async () => {
    const { exporter, tracer } = inMemoryTracing(new AlwaysOffSampler())
    const world = await agentWorld()
    const inner = createStepSurface(FIGURES)
    const returned: unknown[] = []
    const recording: StepSurface = {
      step: (input) => (returned.push(inner.step(input)), returned.at(-1) as StepResult),
      observeUsage: (usage) => (returned.push(inner.observeUsage(usage)), returned.at(-1) as ReturnType<StepSurface['observeUsage']>),
    }
    const traced = withTracing(recording, { tracer })
    const step = traced.step({ assembly: await world.assemble() })
    const usage = traced.observeUsage({ inputTokens: 5, cachedInputTokens: 0 })
    expect([step, usage]).toEqual(returned)
    expect(step).toBe(returned[0])
    expect(usage).toBe(returned[1])
    expect(exporter.getFinishedSpans()).toEqual([])
  })

  test('a step that throws rethrows the same error, changes nothing, and its span ends with the exception and an error status', async () => {
    const { exporter, tracer } = inMemoryTracing()
    const world = await agentWorld()
    const traced = withTracing(createStepSurface(), { tracer })
    let thrown: unknown
    try {
      traced.step({ assembly: null as never })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect(() => traced.observeUsage({ inputTokens: 1, cachedInputTokens: 0 })).toThrow(/before the first step/)
    expect(traced.step({ assembly: await world.assemble() }).step).toBe(1)
    const [failed] = spansNamed(exporter, STEP_SPAN)
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: (thrown as Error).message })
    expect(failed!.events.map((event) => [event.name, event.attributes?.['exception.type']])).toEqual([['exception', 'TypeError']])
  })

  test('bad arguments are TypeErrors naming them', () => {
    const surface = createStepSurface()
    expect(() => withTracing({} as never)).toThrow(/withTracing expects a step surface with step\(\) and observeUsage\(\) \(got an object\); pass the result of createStepSurface\(\)/)
    expect(() => withTracing(surface, null as never)).toThrow(/withTracing options must be an object \(got null\)/)
    expect(() => withTracing(surface, { tracer: {} as never })).toThrow(/withTracing option "tracer" must be an OpenTelemetry Tracer with startSpan\(\)/)
    expect(() => withTracing(surface, { agent: '' })).toThrow(/withTracing option "agent" must be a non-empty string \(got string ""\)/)
    expect(() => withTracing(surface, { recordContent: 'yes' as never })).toThrow(/withTracing option "recordContent" must be a boolean \(got string "yes"\)/)
    expect(() => withTracing(surface, { activeSpan: 'parent' as never })).toThrow(/withTracing option "activeSpan" must be 'child' or 'events' \(got string "parent"\)/)
    for (const bad of [() => withTracing({} as never), () => withTracing(surface, { agent: 1 as never })]) expect(bad).toThrow(TypeError)
  })
})

describe('a throwing or misbehaving tracer', () => {
  /** A plain surface stepped beside the traced one, so each traced result can be compared with an untraced one. */
  async function sideBySide(tracer: Tracer) {
    const world = await agentWorld()
    const plain = createStepSurface(FIGURES)
    const traced = withTracing(createStepSurface(FIGURES), { tracer, agent: 'agent-1' })
    const steps: [StepResult, StepResult][] = []
    for (let i = 0; i < 3; i++) {
      if (i === 2) world.branch.value = 'release'
      const assembly = await world.assemble()
      steps.push([traced.step({ assembly }), plain.step({ assembly })])
      expect(traced.observeUsage({ inputTokens: 100, cachedInputTokens: 10 })).toEqual(plain.observeUsage({ inputTokens: 100, cachedInputTokens: 10 }))
    }
    traced.end()
    const strip = ({ rendered, ...rest }: StepResult) => ({ ...rest, text: rendered.text })
    for (const [a, b] of steps) expect(strip(a)).toEqual(strip(b))
  }

  test('a tracer whose startSpan throws never fails a step, is called once, and the fault is reported once through diag', async () => {
    const logged = vi.fn()
    diag.setLogger({ error: logged, warn() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.ERROR)
    const startSpan = vi.fn(() => {
      throw new Error('exporter down')
    })
    await sideBySide({ startSpan, startActiveSpan: startSpan } as unknown as Tracer)
    expect(startSpan).toHaveBeenCalledTimes(1)
    expect(logged).toHaveBeenCalledTimes(1)
    expect(logged.mock.calls[0]![0]).toMatch(/promptloom\/otel: the tracer threw/)
  })

  test('a span whose setAttributes throws, or a tracer that returns no span, never fails a step', async () => {
    const { tracer: real } = inMemoryTracing()
    const throwingSpan = vi.fn((name: string): Span => {
      const span = real.startSpan(name)
      span.setAttributes = () => {
        throw new RangeError('attribute limit')
      }
      return span
    })
    await sideBySide({ startSpan: throwingSpan, startActiveSpan: real.startActiveSpan.bind(real) } as unknown as Tracer)
    expect(throwingSpan).toHaveBeenCalledTimes(1)
    const noSpan = vi.fn(() => undefined)
    await sideBySide({ startSpan: noSpan, startActiveSpan: noSpan } as unknown as Tracer)
    expect(noSpan).toHaveBeenCalledTimes(1)
  })

  test('a diag logger that throws is swallowed too', async () => {
    diag.setLogger(
      {
        error() {
          throw new Error('logger down')
        },
        warn() {},
        info() {},
        debug() {},
        verbose() {},
      },
      DiagLogLevel.ERROR,
    )
    const startSpan = () => {
      throw new Error('exporter down')
    }
    await sideBySide({ startSpan, startActiveSpan: startSpan } as unknown as Tracer)
  })
})
