/**
 * The benchmark workload, built identically on promptloom and on the
 * recompute-everything reference (test/reference), so the two run the same
 * registrations, the same steps and the same reads.
 */
import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import {
  createScope,
  scopeParentOf,
  renderContextSnapshot,
  renderPrompt,
  SystemPrompt,
  type PromptAssembly,
  type PromptContext,
  type PromptSection,
  type Scope,
  type ToolProviderResult,
  type VariableSource,
} from '../src/index.js'
import {
  ReferenceSystemPrompt,
  referenceRenderContextSnapshot,
  referenceRenderPrompt,
} from '../test/reference/index.js'

/** The registry surface both implementations share. */
export interface PromptService {
  section(section: PromptSection): () => Promise<void> | undefined
  context(context: PromptContext): () => Promise<void> | undefined
  variable(name: string, provider: VariableSource): () => Promise<void> | undefined
  tools(provider: () => ToolProviderResult): () => Promise<void> | undefined
  assemble(context?: { scope?: object }): Promise<PromptAssembly>
}

/** One implementation under test. */
export interface Impl {
  readonly name: 'reference' | 'promptloom'
  load(app: Context): PromiseLike<unknown>
  service(ctx: Context): PromptService
  renderPrompt(assembly: PromptAssembly): string
  renderContextSnapshot(assembly: PromptAssembly): string
}

export const promptloom: Impl = {
  name: 'promptloom',
  load: (app) => app.plugin(SystemPrompt, { personaPrefix: 'You are {{model}}.', personaSuffix: 'Workspace: {{cwd}}' }),
  service: (ctx) => ctx.systemPrompt,
  renderPrompt,
  renderContextSnapshot,
}

export const reference: Impl = {
  name: 'reference',
  load: (app) =>
    // The original harness emits system-prompt/change on every registration and disposal.
    // The baseline reads the same parent links the harness binds (the oracle keeps none of its own).
    app.plugin(ReferenceSystemPrompt, {
      personaPrefix: 'You are {{model}}.',
      personaSuffix: 'Workspace: {{cwd}}',
      emitChanges: true,
      parentOf: scopeParentOf,
    }),
  service: (ctx) => ctx.referencePrompt as unknown as PromptService,
  renderPrompt: referenceRenderPrompt,
  renderContextSnapshot: referenceRenderContextSnapshot,
}

export const IMPLS: readonly Impl[] = [reference, promptloom]

/** A small deterministic PRNG (mulberry32), so both implementations get the same workload. */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ('the agent must read files carefully before editing them and explain each change in plain words ' +
  'prefer small commits run tests after every edit never guess an api look it up instead keep answers short ' +
  'use tools when they help respect the sandbox ask before destructive actions').split(' ')

function prose(rand: () => number, length: number): string {
  let out = ''
  while (out.length < length) out += WORDS[Math.floor(rand() * WORDS.length)] + (rand() < 0.1 ? '.\n' : ' ')
  return out.slice(0, length)
}

/** The 13 variables: mostly static strings, two signals (the `signal` scenarios'), one function. */
export const VARIABLES = ['model', 'cwd', 'date', 'user', 'os', 'shell', 'repo', 'branch', 'locale', 'plan', 'turn', 'clock', 'context_turn']

export interface Workload {
  readonly app: Context
  /** The injected plugin context the registrations were made through. */
  readonly ctx: Context
  readonly impl: Impl
  readonly agents: readonly object[]
  readonly scopes: readonly Scope[]
  readonly turn: Signal<string>
  /** A per-step value referenced only from a runtime context. */
  readonly contextTurn: Signal<string>
  /** One model step for `scope`; returns a checksum of what was read. */
  step(scope: object | undefined): Promise<number>
  dispose(): Promise<void>
}

export interface WorkloadOptions {
  /** Global sections. */
  readonly G: number
  /** Agent scopes under one preset. */
  readonly A: number
  readonly seed?: number
}

function toolResult(rand: () => number, provider: number): ToolProviderResult {
  const schemas = []
  for (let t = 0; t < 10; t++) {
    const properties: Record<string, unknown> = {}
    const count = 5 + Math.floor(rand() * 11)
    for (let p = 0; p < count; p++) {
      properties[`arg_${p}`] = { type: p % 3 === 0 ? 'number' : 'string', description: prose(rand, 60 + Math.floor(rand() * 80)) }
    }
    schemas.push({
      name: `tool_${provider}_${t}`,
      description: prose(rand, 200 + Math.floor(rand() * 300)),
      parameters: { type: 'object', properties, required: Object.keys(properties).slice(0, 2) },
    })
  }
  return { schemas }
}

/**
 * A fresh app with `impl` loaded, and a plugin context that injects its
 * service (scopes are minted from it, so their contexts resolve the service).
 */
export async function mount(impl: Impl): Promise<{ app: Context; ctx: Context; service: string; sp: PromptService }> {
  const app = new Context()
  await impl.load(app)
  const service = impl.name === 'promptloom' ? 'systemPrompt' : 'referencePrompt'
  let ctx!: Context
  await app.inject([service], (injected) => {
    ctx = injected
  })
  return { app, ctx, service, sp: impl.service(ctx) }
}

/**
 * Builds the workload: G global sections (200–1500 characters, about a third
 * with 1–3 variable references, about 5% function providers), 13 variables,
 * 40 tools from 4 providers that return the same result object, 4 runtime
 * contexts, and A agents under one preset, each with 3 scoped sections (one
 * shadowing a global) and a scoped variable.
 */
export async function buildWorkload(impl: Impl, { G, A, seed = 42 }: WorkloadOptions): Promise<Workload> {
  const rand = random(seed)
  const { app, ctx, service, sp } = await mount(impl)
  const turn = signal('1')
  const contextTurn = signal('1')
  for (const name of VARIABLES) {
    if (name === 'turn') sp.variable(name, turn)
    else if (name === 'context_turn') sp.variable(name, contextTurn)
    else if (name === 'clock') sp.variable(name, () => 'step')
    else sp.variable(name, `${name}-value-${Math.floor(rand() * 1000)}`)
  }
  for (let i = 0; i < G; i++) {
    let text = prose(rand, 200 + Math.floor(rand() * 1300))
    if (i % 3 === 0) {
      const refs = 1 + Math.floor(rand() * 3)
      const at = Array.from({ length: refs }, () => Math.floor(rand() * text.length)).sort((a, b) => b - a)
      for (const position of at) {
        const name = VARIABLES[Math.floor(rand() * 8)]
        text = `${text.slice(0, position)} {{${name}}} ${text.slice(position)}`
      }
    }
    // A few sections carry the per-turn value, as real prompts sometimes do.
    if (i % 100 === 1) text += ' This is turn {{turn}}.'
    const fixed = text
    sp.section({ name: `section-${String(i).padStart(4, '0')}`, order: 100 + i * 10, text: i % 20 === 7 ? () => fixed : fixed })
  }
  for (let c = 0; c < 4; c++) {
    const text = c === 3 ? 'Turn {{turn}}.' : c === 2 ? `${prose(rand, 120)} Step {{context_turn}}.` : prose(rand, 120)
    sp.context({ name: `context-${c}`, order: 100 + c, text, required: c === 0 })
  }
  for (let p = 0; p < 4; p++) {
    const result = toolResult(rand, p)
    sp.tools(() => result)
  }
  const preset = { name: 'preset' }
  const scopes: Scope[] = [createScope(ctx, preset)]
  const agents: object[] = []
  for (let a = 0; a < A; a++) {
    const agent = { name: `agent-${a}` }
    const scope = createScope(ctx, agent, { parent: preset })
    const scoped = impl.service(scope.ctx)
    scoped.section({ name: 'section-0000', order: 100, text: `Agent ${a} overrides the first section.` })
    scoped.section({ name: `agent-${a}-role`, order: 50, text: `You are agent ${a}; your workspace is {{cwd}}.` })
    scoped.section({ name: `agent-${a}-notes`, order: 5_000_000, text: prose(rand, 400) })
    scoped.variable('cwd', `/work/agent-${a}`)
    scopes.push(scope)
    agents.push(agent)
  }
  const root = app as unknown as Record<string, PromptService>
  return {
    app,
    ctx,
    impl,
    agents,
    scopes,
    turn,
    contextTurn,
    async step(scope) {
      const assembly = await root[service]!.assemble({ scope })
      const prompt = impl.renderPrompt(assembly)
      const snapshot = impl.renderContextSnapshot(assembly)
      // Read the strings so lazy concatenation cannot hide work.
      return prompt.length + prompt.charCodeAt(prompt.length >> 1) + snapshot.length + snapshot.charCodeAt(snapshot.length - 1)
    },
    async dispose() {
      for (const scope of scopes) await scope.dispose()
    },
  }
}
