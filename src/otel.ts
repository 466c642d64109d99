/**
 * `promptloom/otel`: a step surface's steps and usage as OpenTelemetry spans, with
 * each step's prompt provenance, cache figures and cache-break causes. The only
 * module that loads `@opentelemetry/api` (an optional peer dependency).
 *
 * @packageDocumentation
 */

import { diag, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import { describeValue, optionError } from './assembly/errors.js'
import { fnv1a64 } from './providers/fnv1a64.js'
import type { RenderedPart, RenderedPrompt } from './render/rendered-prompt.js'
import { layerLabel } from './surface/session-log.js'
import type { StepInput, StepSurface } from './surface/step-surface.js'
import type { ObservedUsage, StepResult, UsageRecord } from './surface/step-result.js'

/** The name of a step's span, and of the event that records a step on an active span. */
export const STEP_SPAN = 'promptloom.step'
/** The name of the event (or span) that carries usage reported after its step's span ended. */
export const USAGE_EVENT = 'promptloom.usage'

/**
 * Where a step is recorded while a span is active: `'child'`, a `promptloom.step` span of its own under it; `'events'`, a
 * `promptloom.step` event on it and its usage's attributes (while it records). With no active span, always a span of its own.
 */
export type ActiveSpanMode = 'child' | 'events'

/** Options of `withTracing`. */
export interface TracingOptions {
  /** The tracer spans are started with. Default `trace.getTracer('promptloom')`, which follows the globally registered provider. */
  readonly tracer?: Tracer
  /** The agent's name, recorded as `promptloom.agent` on every span and event. */
  readonly agent?: string
  /** Record each part's text in `gen_ai.system_instructions`. Default `false`: prompts can hold data that must not leave the process. */
  readonly recordContent?: boolean
  /** Where a step is recorded while a span is active. Default `'child'`. */
  readonly activeSpan?: ActiveSpanMode
}

/** A step surface whose steps and usage are also recorded as OpenTelemetry spans. */
export interface TracedStepSurface extends StepSurface {
  /** Ends the latest step's span if it still waits for its usage; a loop that reports none calls it when it stops. Never throws. */
  end(): void
}

/**
 * Wraps `surface` so that each `step()` is also a `promptloom.step` span with the prompt's provenance and cache figures, and
 * the step's `observeUsage()` adds the `gen_ai.usage.*` figures and ends it (later usage: a `promptloom.usage` event or span).
 * Results and errors are the surface's own; a throwing tracer never fails a step (after its first fault the surface stops
 * calling it). Throws a `TypeError` for a bad surface or option.
 *
 * @example
 * ```ts
 * import { createStepSurface } from 'promptloom'
 * import { withTracing } from 'promptloom/otel'
 *
 * const surface = withTracing(createStepSurface(), { agent: 'agent-1' }) // spans go to the registered tracer provider
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
  const { tracer, agent, recordContent, activeSpan = 'child' } = options
  const bad = (option: string, rule: string, value: unknown, hint?: string): never => {
    throw optionError('withTracing', option, rule, value, hint)
  }
  if (tracer !== undefined && (typeof tracer !== 'object' || tracer === null || typeof tracer.startSpan !== 'function')) {
    bad('tracer', 'an OpenTelemetry Tracer with startSpan()', tracer, '; get one with trace.getTracer(name)')
  }
  if (agent !== undefined && (typeof agent !== 'string' || agent === '')) bad('agent', 'a non-empty string', agent)
  if (recordContent !== undefined && typeof recordContent !== 'boolean') bad('recordContent', 'a boolean', recordContent)
  if (activeSpan !== 'child' && activeSpan !== 'events') bad('activeSpan', "'child' or 'events'", activeSpan)
  const spanTracer = tracer ?? trace.getTracer('promptloom')
  const instructions = systemInstructions(recordContent === true)
  let off = false
  /** The latest step's span while it waits for its usage: one this surface started (`own`), or the caller's it adds events to. */
  let open: { readonly span: Span; readonly own: boolean; readonly step: number } | undefined

  /** Runs `fn` against the tracer; the first fault (anything the tracer, a span or the context API throws) turns it off. */
  const guard = <T>(fn: () => T): T | undefined => {
    if (off) return undefined
    try {
      return fn()
    } catch (error) {
      off = true
      open = undefined
      try {
        diag.error('promptloom/otel: the tracer threw, so this step surface records no more telemetry', error)
      } catch {
        // A diag logger that throws: nothing is left to report to.
      }
      return undefined
    }
  }
  const endOpen = (): void => {
    if (open?.own === true) open.span.end()
    open = undefined
  }
  const activeRecording = (): Span | undefined => {
    const active = trace.getActiveSpan()
    return active !== undefined && active.isRecording() ? active : undefined
  }
  /** Usage whose step span has ended, naming the agent and step. */
  const late = (record: UsageRecord): void => {
    const attributes = defined({ 'promptloom.agent': agent, 'promptloom.step': record.step, ...usageAttributes(record) })
    const active = activeRecording()
    if (active !== undefined) active.addEvent(USAGE_EVENT, attributes)
    else spanTracer.startSpan(USAGE_EVENT, { attributes }).end()
  }

  return {
    step(input: StepInput): StepResult {
      const target = guard(() => {
        const active = activeSpan === 'events' ? activeRecording() : undefined
        return active !== undefined ? { span: active, own: false } : { span: spanTracer.startSpan(STEP_SPAN), own: true }
      })
      let result: StepResult
      try {
        result = surface.step(input)
      } catch (error) {
        // The step's own span ends with the exception; a caller's span is left as it is.
        if (target?.own === true) guard(() => {
          target.span.recordException(error instanceof Error ? error : String(error))
          target.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
          target.span.end()
        })
        throw error
      }
      if (target === undefined) return result
      guard(() => {
        // The previous step's span ends; this one waits for its usage.
        if (target.span.isRecording()) {
          const attributes = stepAttributes(result, agent, instructions(result.rendered))
          if (target.own) target.span.setAttributes(attributes)
          else target.span.addEvent(STEP_SPAN, attributes)
        }
        endOpen()
        open = { ...target, step: result.step }
      })
      return result
    },
    observeUsage(usage: ObservedUsage): UsageRecord {
      const record = surface.observeUsage(usage)
      guard(() => {
        const waiting = open
        if (waiting === undefined || waiting.step !== record.step) return late(record)
        open = undefined
        // A span that does not record (sampled out, or a no-op tracer's) just ends.
        if (waiting.span.isRecording()) waiting.span.setAttributes(usageAttributes(record))
        else if (!waiting.own) return late(record)
        if (waiting.own) waiting.span.end()
      })
      return record
    },
    end(): void {
      guard(endOpen)
    },
  }
}

// Attribute names: the GenAI semantic conventions' (v1.41.0) `gen_ai.*` where defined, else `promptloom.*`.

/** `attributes` without the ones the result lacks: a missing figure is left out, not written as 0. */
function defined(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined))
}

/** The attributes of one step, with `instructions` as `gen_ai.system_instructions`. */
function stepAttributes(result: StepResult, agent: string | undefined, instructions: string): Attributes {
  const broke = result.cacheBreak
  return defined({
    'promptloom.agent': agent,
    'promptloom.step': result.step,
    'promptloom.stable_prefix_tokens': result.stablePrefixTokens,
    'promptloom.reusable_prefix_tokens': result.reusablePrefixTokens,
    'promptloom.prompt_tokens': result.promptTokens,
    'promptloom.expected_cached_tokens': result.expectedCachedTokens,
    'promptloom.cache_note': result.cacheNote,
    'promptloom.cache_break.cause': broke?.cause,
    'promptloom.cache_break.section': broke?.section,
    'promptloom.cache_break.layer': broke?.layer === undefined ? undefined : layerLabel(broke.layer),
    'promptloom.cache_break.variable': broke?.variable,
    'promptloom.cache_break.tools.added': broke?.tools?.added.slice(),
    'promptloom.cache_break.tools.removed': broke?.tools?.removed.slice(),
    'promptloom.cache_break.tools.changed': broke?.tools?.changed.slice(),
    'promptloom.withheld': result.withheld?.slice(),
    'promptloom.tools_changed': result.toolsChanged,
    'gen_ai.system_instructions': instructions,
  })
}

/** What the provider reported; `input_tokens` counts cached ones too, and the write figure is left out when not reported. */
function usageAttributes(record: UsageRecord): Attributes {
  return defined({
    'gen_ai.usage.input_tokens': record.inputTokens,
    'gen_ai.usage.cache_read.input_tokens': record.cachedInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': record.cacheWriteTokens,
  })
}

/** A prompt's `gen_ai.system_instructions` as JSON (one item per part, text only with `recordContent`), cached per part. */
function systemInstructions(recordContent: boolean): (rendered: RenderedPrompt) => string {
  const entries = new WeakMap<RenderedPart, { readonly item: string; readonly hash: string }>()
  let last: RenderedPrompt | undefined
  let previous = new Map<string, RenderedPart>()
  let text = ''
  return (rendered) => {
    if (rendered === last) return text
    const named = new Map<string, RenderedPart>()
    const items = rendered.parts.map((part) => {
      named.set(part.name, part)
      let entry = entries.get(part)
      if (entry === undefined) {
        const before = previous.get(part.name)
        const hash = before?.text === part.text ? entries.get(before)!.hash : fnv1a64(new TextEncoder().encode(part.text))
        // A text part must carry its `content`, so a part recorded without its text is a generic part.
        const kind = recordContent ? { type: 'text', content: part.text } : { type: 'generic', generic_type: 'promptloom.section' }
        const layer = part.layer === undefined ? {} : { layer: layerLabel(part.layer) }
        const item = JSON.stringify({ ...kind, name: part.name, ...layer, stability: part.stability, content_hash: hash })
        entries.set(part, (entry = { item, hash }))
      }
      return entry.item
    })
    last = rendered
    previous = named
    return (text = `[${items.join(',')}]`)
  }
}

