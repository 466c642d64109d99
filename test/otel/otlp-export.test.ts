import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { STEP_SPAN, withTracing } from '../../src/otel.js'
import { startCollector } from './otlp-collector.fixtures.js'
import { agentWorld, createStepSurface, FIGURES } from './tracing.fixtures.js'

// The real OTLP/HTTP exporter sends a traced session to a collector stand-in
// on 127.0.0.1, which decodes the OTLP JSON payloads it receives.

let collector: Awaited<ReturnType<typeof startCollector>>
beforeAll(async () => {
  collector = await startCollector()
})
afterAll(() => collector.close())

test('a traced session exported with the OTLP/HTTP exporter arrives with each step span and its attributes', async () => {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: collector.url }))] })
  const world = await agentWorld()
  const traced = withTracing(createStepSurface(FIGURES), { tracer: provider.getTracer('promptloom'), agent: 'agent-1' })
  const first = traced.step({ assembly: await world.assemble() })
  traced.observeUsage({ inputTokens: 120, cachedInputTokens: 0, cacheWriteTokens: 100 })
  world.branch.value = 'release'
  const second = traced.step({ assembly: await world.assemble() })
  traced.observeUsage({ inputTokens: 125, cachedInputTokens: 33, cacheWriteTokens: 0 })
  await provider.shutdown()

  expect(collector.received.map(({ path, headers }) => [path, headers['content-type']])).toEqual([['/v1/traces', 'application/json']])
  const spans = collector.spans()
  expect(spans.map((span) => span.name)).toEqual([STEP_SPAN, STEP_SPAN])
  expect(spans[0]!.attributes).toEqual({
    'promptloom.agent': 'agent-1',
    'promptloom.step': 1,
    'promptloom.stable_prefix_tokens': 0,
    'promptloom.reusable_prefix_tokens': 0,
    'promptloom.prompt_tokens': first.promptTokens,
    'promptloom.expected_cached_tokens': 0,
    'promptloom.tools_changed': false,
    'gen_ai.system_instructions': expect.any(String),
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.cache_read.input_tokens': 0,
    'gen_ai.usage.cache_creation.input_tokens': 100,
  })
  expect(spans[1]!.attributes).toMatchObject({
    'promptloom.step': 2,
    'promptloom.stable_prefix_tokens': second.stablePrefixTokens,
    'promptloom.expected_cached_tokens': second.expectedCachedTokens,
    'gen_ai.usage.cache_read.input_tokens': 33,
  })
  expect(second.stablePrefixTokens).toBeGreaterThan(0)
  const parts = JSON.parse(spans[1]!.attributes['gen_ai.system_instructions'] as string) as { name: string; layer: string }[]
  expect(parts.map(({ name, layer }) => `${name}@${layer}`)).toEqual(['policy@global', 'repo@global', 'role@agent-1'])
  expect(spans[0]!.traceId).not.toBe(spans[1]!.traceId)
})
