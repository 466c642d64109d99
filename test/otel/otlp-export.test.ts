import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { STEP_SPAN, withTracing } from '../../src/otel.js'
import { agentWorld, createStepSurface, FIGURES } from './tracing.fixtures.js'

// The real OTLP/HTTP exporter sends a traced session to a collector stand-in
// on 127.0.0.1, which decodes the OTLP JSON payloads it receives.

interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

let server: Server
let url: string
const received: Received[] = []

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** One OTLP `AnyValue` as a plain value (int64 arrives as a number or a decimal string). */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue
  if ('boolValue' in value) return value.boolValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return value.doubleValue
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plain)
  throw new Error(`unexpected OTLP value ${JSON.stringify(value)}`)
}

interface DecodedSpan {
  readonly name: string
  readonly traceId: string
  readonly attributes: Record<string, unknown>
}

/** Every span of every `ExportTraceServiceRequest` received, with its attributes as a plain record. */
function decodedSpans(): DecodedSpan[] {
  const spans: DecodedSpan[] = []
  for (const { body } of received) {
    for (const resource of (body as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] }).resourceSpans) {
      for (const scope of resource.scopeSpans) {
        for (const span of scope.spans) {
          const attributes = Object.fromEntries(
            (span.attributes as { key: string; value: Record<string, unknown> }[]).map(({ key, value }) => [key, plain(value)]),
          )
          spans.push({ name: span.name as string, traceId: span.traceId as string, attributes })
        }
      }
    }
  }
  return spans
}

test('a traced session exported with the OTLP/HTTP exporter arrives with each step span and its attributes', async () => {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] })
  const world = await agentWorld()
  const traced = withTracing(createStepSurface(FIGURES), { tracer: provider.getTracer('promptloom'), agent: 'agent-1' })
  const first = traced.step({ assembly: await world.assemble() })
  traced.observeUsage({ inputTokens: 120, cachedInputTokens: 0, cacheWriteTokens: 100 })
  world.branch.value = 'release'
  const second = traced.step({ assembly: await world.assemble() })
  traced.observeUsage({ inputTokens: 125, cachedInputTokens: 33, cacheWriteTokens: 0 })
  await provider.shutdown()

  expect(received.map(({ path, headers }) => [path, headers['content-type']])).toEqual([['/v1/traces', 'application/json']])
  const spans = decodedSpans()
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
