/**
 * The demo's optional OpenTelemetry export (docs/opentelemetry.md). With the
 * standard `OTEL_EXPORTER_OTLP_ENDPOINT` set (say `http://localhost:4318` for
 * a local Jaeger or OpenTelemetry Collector), `traced(surface, agent)` wraps a
 * step surface with `withTracing`, and every step is exported as a
 * `promptloom.step` span over OTLP/HTTP. Without it, `traced` returns the
 * surface as it is and no OpenTelemetry package is loaded: they are imported
 * dynamically, only when needed.
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 npm start
 */
import type { StepSurface } from '../src/index.js'

/** Wraps an agent's step surface for export, or returns it unchanged when no endpoint is set. */
export type Traced = (surface: StepSurface, agent: string) => StepSurface

async function tracingFromEnv(): Promise<Traced> {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (endpoint === undefined || endpoint === '') return (surface) => surface
  const [{ trace }, { BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { withTracing }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('../src/otel.js'),
  ])
  // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT itself and posts to its /v1/traces.
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'promptloom-demo' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  trace.setGlobalTracerProvider(provider)
  const surfaces: { end(): void }[] = []
  // The demo reports no usage, so each agent's last step span is still open when the loop ends.
  process.once('beforeExit', () => {
    for (const surface of surfaces) surface.end()
    void provider.shutdown().then(() => console.log('tracing: spans flushed'))
  })
  console.log(`tracing: exporting promptloom.step spans to ${endpoint} (OTLP/HTTP)`)
  return (surface, agent) => {
    const tracedSurface = withTracing(surface, { agent })
    surfaces.push(tracedSurface)
    return tracedSurface
  }
}

/** The demo's wrapper, set up once from the environment. */
export const traced: Traced = await tracingFromEnv()
