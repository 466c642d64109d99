import { signal, type Signal } from '@preact/signals-core'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-base'
import type { Context } from 'cordis'
import { cacheRules, createStepSurface, type PromptAssembly, type Scope, type StepSurfaceOptions } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'

// Shared fixtures of the promptloom/otel tests: the real SDK with its
// in-memory exporter, and a small registry with a global and a scoped layer.

/** A tracer of a fresh SDK provider whose spans land in `exporter` as they end. */
export function inMemoryTracing(sampler?: Sampler) {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], ...(sampler === undefined ? {} : { sampler }) })
  return { exporter, provider, tracer: provider.getTracer('promptloom-test') }
}

/** The ended spans named `name`, in the order they ended. */
export function spansNamed(exporter: InMemorySpanExporter, name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name)
}

/** One character counts as one token. */
export const countTokens = (text: string): number => text.length

/** The surface options most tests use: token figures and expected reuse by Anthropic's rules with no minimum. */
export const FIGURES: StepSurfaceOptions = {
  countTokens,
  cacheRules: cacheRules.anthropic({ model: 'claude-sonnet-4-6', minimumTokens: 0 }),
}

export const POLICY_TEXT = 'Run the tests before you commit.'
export const ROLE_TEXT = 'You are agent-1; you work in /work/agent-1.'

/**
 * A registry with a static global `policy` section (a cache breakpoint), a
 * global `repo` section referencing the `branch` variable (a signal), and a
 * scoped `role` section in agent-1's layer (`scope`); `assemble()` is agent-1's view.
 */
export async function agentWorld(): Promise<{ app: Context; branch: Signal<string>; key: { readonly name: 'agent-1' }; scope: Scope; assemble: () => Promise<PromptAssembly> }> {
  const app = await mount(BARE)
  const branch = signal('main')
  const key = { name: 'agent-1' } as const
  app.systemPrompt.variable('branch', branch, { stability: 'session' })
  app.systemPrompt.section({ name: 'policy', order: 0, text: POLICY_TEXT, stability: 'static', cacheBreakpoint: true })
  app.systemPrompt.section({ name: 'repo', order: 10, text: 'On branch {{branch}}.' })
  const scope = await mintScope(app, key)
  scope.ctx.systemPrompt.section({ name: 'role', order: 20, text: ROLE_TEXT })
  return { app, branch, key, scope, assemble: () => app.systemPrompt.assemble({ scope: key }) }
}

export { createStepSurface }
