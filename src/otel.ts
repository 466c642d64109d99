/**
 * `promptloom/otel`: a step surface's steps and usage as OpenTelemetry spans, with
 * each step's prompt provenance, cache figures and cache-break causes. The only
 * module that loads `@opentelemetry/api` (an optional peer dependency).
 *
 * @packageDocumentation
 */

export { withTracing, type TracedStepSurface, type TracingOptions } from './otel/with-tracing.js'
export { STEP_SPAN, USAGE_EVENT, type ActiveSpanMode } from './otel/with-tracing.js'
