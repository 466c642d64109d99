/**
 * The spans and events of one traced surface. Every call into the tracer or
 * a span goes through `#guard`: telemetry never fails a step, and after the
 * first fault this surface stops calling the tracer, so a broken tracer costs
 * no more than a no-op one from then on.
 *
 *   step N ──► span "promptloom.step" (step attributes) ──► observeUsage ──► + gen_ai.usage.*, end
 *                                                 └─ or ended by step N+1, or by end()
 *   observeUsage after the span ended ──► event "promptloom.usage" on the active span,
 *                                         else a span "promptloom.usage" of its own
 */

import { diag, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import type { StepResult } from '../surface/step-result.js'
import type { UsageRecord } from '../surface/usage-record.js'
import { stepAttributes, usageAttributes } from './step-attributes.js'
import { SystemInstructions } from './system-instructions.js'

/** The name of a step's span, and of the event that records a step on an active span. */
export const STEP_SPAN = 'promptloom.step'
/** The name of the event (or span) that carries usage reported after its step's span ended. */
export const USAGE_EVENT = 'promptloom.usage'

/**
 * Where a step is recorded while a span is active: `'child'`, a
 * `promptloom.step` span of its own under it; `'events'`, a `promptloom.step`
 * event on it (when it records). With no active span, always a span of its own.
 */
export type ActiveSpanMode = 'child' | 'events'

/** Where a step's telemetry went: a span this surface started, or the caller's span it added an event to. */
interface Target {
  readonly span: Span
  readonly own: boolean
}

/** The step whose span is still open for its usage. */
interface Open extends Target {
  readonly step: number
}

/** What a traced surface records, and where. */
export interface TelemetryOptions {
  readonly tracer: Tracer
  readonly agent: string | undefined
  readonly recordContent: boolean
  readonly activeSpan: ActiveSpanMode
}

/** The telemetry state of one traced surface (never shared). */
export class StepTelemetry {
  readonly #options: TelemetryOptions
  readonly #instructions: SystemInstructions
  /** Set by the first fault: no further call reaches the tracer. */
  #off = false
  #open: Open | undefined

  constructor(options: TelemetryOptions) {
    this.#options = options
    this.#instructions = new SystemInstructions(options.recordContent)
  }

  /** Before the step runs: where it will be recorded; `undefined` when tracing is off. */
  begin(): Target | undefined {
    return this.#guard(() => {
      if (this.#options.activeSpan === 'events') {
        const active = trace.getActiveSpan()
        if (active !== undefined && active.isRecording()) return { span: active, own: false }
      }
      return { span: this.#options.tracer.startSpan(STEP_SPAN), own: true }
    })
  }

  /**
   * After the step returned: its attributes on its span (or as an event on
   * the caller's), computed only when that span records; the previous step's
   * span ends, and this one stays open for the usage.
   */
  record(target: Target | undefined, result: StepResult): void {
    if (target === undefined) return
    this.#guard(() => {
      const { span, own } = target
      if (span.isRecording()) {
        const attributes = stepAttributes(result, this.#options.agent, this.#instructions.of(result.rendered))
        if (own) span.setAttributes(attributes)
        else span.addEvent(STEP_SPAN, attributes)
      }
      this.#endOpen()
      this.#open = { span, own, step: result.step }
    })
  }

  /** The step threw: its own span ends with the exception and an error status (a caller's span is left as it is). */
  fail(target: Target | undefined, error: unknown): void {
    if (target === undefined || !target.own) return
    this.#guard(() => {
      const { span } = target
      span.recordException(error instanceof Error ? error : String(error))
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
      span.end()
    })
  }

  /**
   * The usage of step `record.step`: on that step's span while it is open and
   * recording (ending a span of its own), else late (see the file header). A
   * span that does not record (sampled out, or a no-op tracer's) just ends.
   */
  usage(record: UsageRecord): void {
    this.#guard(() => {
      const open = this.#open
      if (open !== undefined && open.step === record.step) {
        this.#open = undefined
        if (open.span.isRecording()) {
          open.span.setAttributes(usageAttributes(record))
          if (open.own) open.span.end()
          return
        }
        if (open.own) {
          open.span.end()
          return
        }
      }
      this.#late(record)
    })
  }

  /** Ends the open step span, if any (a loop that reports no usage calls it when it stops). */
  end(): void {
    this.#guard(() => this.#endOpen())
  }

  #endOpen(): void {
    const open = this.#open
    this.#open = undefined
    if (open !== undefined && open.own) open.span.end()
  }

  /** Usage whose step span has ended: an event on the active span, or a span of its own, naming the agent and step. */
  #late(record: UsageRecord): void {
    const attributes: Attributes = {
      ...(this.#options.agent === undefined ? {} : { 'promptloom.agent': this.#options.agent }),
      'promptloom.step': record.step,
      ...usageAttributes(record),
    }
    const active = trace.getActiveSpan()
    if (active !== undefined && active.isRecording()) {
      active.addEvent(USAGE_EVENT, attributes)
      return
    }
    this.#options.tracer.startSpan(USAGE_EVENT, { attributes }).end()
  }

  /**
   * Runs `fn` against the tracer. Swallowed: anything the tracer, a span or
   * the context API throws (a broken exporter hook, a tracer that returns no
   * span, a span method that throws). The first such fault turns this
   * surface's telemetry off and is reported once through OpenTelemetry's
   * `diag` logger, whose own failure is swallowed too.
   */
  #guard<T>(fn: () => T): T | undefined {
    if (this.#off) return undefined
    try {
      return fn()
    } catch (error) {
      this.#off = true
      this.#open = undefined
      try {
        diag.error('promptloom/otel: the tracer threw, so this step surface records no more telemetry', error)
      } catch {
        // A diag logger that throws: nothing is left to report to.
      }
      return undefined
    }
  }
}
