/**
 * `promptloom/otel`: a step surface's steps and usage as OpenTelemetry spans,
 * with each step's prompt provenance (which sections, from which layer, how
 * stable), its cache figures and why its cache broke. The only module of
 * promptloom that loads `@opentelemetry/api` (an optional peer dependency);
 * the package root and `promptloom/node` never do.
 *
 * @packageDocumentation
 */

export { withTracing, type TracedStepSurface, type TracingOptions } from './otel/with-tracing.js'
export { STEP_SPAN, USAGE_EVENT, type ActiveSpanMode } from './otel/step-telemetry.js'
