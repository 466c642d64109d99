import { trace, type Tracer } from '@opentelemetry/api'
import { describeValue } from '../assembly/errors.js'
import type { StepInput, StepSurface } from '../surface/step-surface.js'
import type { StepResult } from '../surface/step-result.js'
import type { ObservedUsage, UsageRecord } from '../surface/usage-record.js'
import { StepTelemetry, type ActiveSpanMode } from './step-telemetry.js'

/** Options of `withTracing`. */
export interface TracingOptions {
  /** The tracer spans are started with. Default `trace.getTracer('promptloom')`, which follows the globally registered provider. */
  readonly tracer?: Tracer
  /** The agent's name, recorded as `promptloom.agent` on every span and event. */
  readonly agent?: string
  /**
   * Record each part's text in `gen_ai.system_instructions`. Default `false`:
   * a part then has its name, layer, stability and content hash only, since
   * prompts can hold data that must not leave the process.
   */
  readonly recordContent?: boolean
  /**
   * While a span is active: `'child'` (default) records each step as a
   * `promptloom.step` span under it; `'events'` adds a `promptloom.step`
   * event to it instead and, on `observeUsage`, the `gen_ai.usage.*`
   * attributes to it while it records. Without an active span a step always
   * gets a span of its own.
   */
  readonly activeSpan?: ActiveSpanMode
}

/** A step surface whose steps and usage are also recorded as OpenTelemetry spans. */
export interface TracedStepSurface extends StepSurface {
  /**
   * Ends the latest step's span if it is still open: a step's span stays open
   * for its usage, until `observeUsage` or the next step. A loop that reports
   * no usage calls this when it stops. Idempotent; never throws.
   */
  end(): void
}

const ACTIVE_SPAN_MODES: readonly ActiveSpanMode[] = ['child', 'events']

/**
 * Wraps `surface` (from `createStepSurface`) so that each `step()` is also
 * recorded as a `promptloom.step` span with the prompt's provenance and cache
 * figures, and each `observeUsage()` adds the provider's `gen_ai.usage.*`
 * figures to that step's span. Results, return values and errors are the
 * surface's own, unchanged; telemetry never throws (see docs/opentelemetry.md).
 * Throws a `TypeError` for a bad surface or option.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api'
 * import { createStepSurface } from 'promptloom'
 * import { withTracing } from 'promptloom/otel'
 *
 * // Spans go to the registered tracer provider (the OpenTelemetry Node SDK, say).
 * const surface = withTracing(createStepSurface(), { tracer: trace.getTracer('my-harness'), agent: 'agent-1' })
 * const result = surface.step({ assembly }) // the surface's own result; the step is a promptloom.step span
 * ```
 */
export function withTracing(surface: StepSurface, options: TracingOptions = {}): TracedStepSurface {
  if (typeof surface !== 'object' || surface === null || typeof surface.step !== 'function' || typeof surface.observeUsage !== 'function') {
    throw new TypeError(`withTracing expects a step surface with step() and observeUsage() (got ${describeValue(surface)}); pass the result of createStepSurface()`)
  }
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`withTracing options must be an object (got ${describeValue(options)})`)
  }
  const { tracer, agent, recordContent, activeSpan } = options
  if (tracer !== undefined && (typeof tracer !== 'object' || tracer === null || typeof tracer.startSpan !== 'function')) {
    throw new TypeError(`withTracing option "tracer" must be an OpenTelemetry Tracer with startSpan() (got ${describeValue(tracer)}); get one with trace.getTracer(name)`)
  }
  if (agent !== undefined && (typeof agent !== 'string' || agent === '')) {
    throw new TypeError(`withTracing option "agent" must be a non-empty string (got ${describeValue(agent)})`)
  }
  if (recordContent !== undefined && typeof recordContent !== 'boolean') {
    throw new TypeError(`withTracing option "recordContent" must be a boolean (got ${describeValue(recordContent)})`)
  }
  if (activeSpan !== undefined && !ACTIVE_SPAN_MODES.includes(activeSpan)) {
    throw new TypeError(`withTracing option "activeSpan" must be 'child' or 'events' (got ${describeValue(activeSpan)})`)
  }
  const telemetry = new StepTelemetry({
    tracer: tracer ?? trace.getTracer('promptloom'),
    agent,
    recordContent: recordContent === true,
    activeSpan: activeSpan ?? 'child',
  })
  return {
    step(input: StepInput): StepResult {
      const target = telemetry.begin()
      let result: StepResult
      try {
        result = surface.step(input)
      } catch (error) {
        telemetry.fail(target, error)
        throw error
      }
      telemetry.record(target, result)
      return result
    },
    observeUsage(usage: ObservedUsage): UsageRecord {
      const record = surface.observeUsage(usage)
      telemetry.usage(record)
      return record
    },
    end(): void {
      telemetry.end()
    },
  }
}
