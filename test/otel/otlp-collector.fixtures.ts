import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

// A collector stand-in on 127.0.0.1: it answers OTLP/HTTP trace exports and
// decodes the OTLP JSON payloads it received.

/** One request the collector received. */
export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

/** One span as decoded from a payload, with its resource's and its own attributes as plain records. */
export interface DecodedSpan {
  readonly name: string
  readonly traceId: string
  readonly resource: Record<string, unknown>
  readonly attributes: Record<string, unknown>
}

type OtlpAttribute = { key: string; value: Record<string, unknown> }

/** One OTLP `AnyValue` as a plain value (int64 arrives as a number or a decimal string). */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue
  if ('boolValue' in value) return value.boolValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return value.doubleValue
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plain)
  throw new Error(`unexpected OTLP value ${JSON.stringify(value)}`)
}

const record = (attributes: OtlpAttribute[] | undefined) => Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, plain(value)]))

/** Starts the collector; `origin` is its base URL, `url` its traces endpoint. */
export async function startCollector() {
  const received: Received[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    url: `${origin}/v1/traces`,
    received,
    /** Every span of every `ExportTraceServiceRequest` received, in order. */
    spans(): DecodedSpan[] {
      const spans: DecodedSpan[] = []
      for (const { body } of received) {
        type Payload = { resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans: Record<string, unknown>[] }[] }[] }
        for (const resourceSpans of (body as Payload).resourceSpans) {
          const resource = record(resourceSpans.resource?.attributes)
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({ name: span.name as string, traceId: span.traceId as string, resource, attributes: record(span.attributes as OtlpAttribute[]) })
            }
          }
        }
      }
      return spans
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
