/**
 * The realistic world the benchmark runs in, built identically on promptloom
 * and on the recompute-everything reference (test/reference), so the two run
 * the same registrations, the same steps and the same reads:
 *
 *   global   G sections of 200–1500 characters (a third with 1–3 {{variable}}
 *            references, 5% function providers; cache breakpoints after the
 *            middle one and the last one), 13 variables, 4 runtime contexts,
 *            40 tools with realistic JSON schemas from 4 providers
 *   preset   one scope every agent hangs under
 *   agent    its own role section naming its workspace (so prompts differ per
 *            agent), a shadow of the first global section, a late volatile
 *            notes section (a signal), its `cwd`, and a workspace context
 *   loop     each agent keeps its last prompt (promptloom: the RenderedPrompt
 *            of render(); the reference: its joined string) and runtime-context
 *            snapshot between steps, as a step surface does
 */
import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import {
  createScope,
  render,
  scopeParentOf,
  renderContextSnapshot,
  SystemPrompt,
  type PromptAssembly,
  type PromptContext,
  type PromptSection,
  type RenderedPrompt,
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

/** What a loop keeps as its prompt: promptloom's RenderedPrompt, the reference's joined string. */
export type LoopPrompt = RenderedPrompt | string

/** One implementation under test. */
export interface Impl {
  readonly name: 'reference' | 'promptloom'
  load(app: Context): PromiseLike<unknown>
  service(ctx: Context): PromptService
  /** The prompt the loop builds its request from and keeps for the next step. */
  render(assembly: PromptAssembly): LoopPrompt
  renderContextSnapshot(assembly: PromptAssembly): string
}

/** The deployment persona both implementations load with (its suffix names the workspace). */
export const PERSONA = { personaPrefix: 'You are {{model}}.', personaSuffix: 'Workspace: {{cwd}}' }

export const promptloom: Impl = {
  name: 'promptloom',
  load: (app) => app.plugin(SystemPrompt, PERSONA),
  service: (ctx) => ctx.systemPrompt,
  render,
  renderContextSnapshot,
}

export const reference: Impl = {
  name: 'reference',
  // The original harness emits system-prompt/change on every registration and disposal.
  // The baseline reads the same parent links the harness binds (the oracle keeps none of its own).
  load: (app) => app.plugin(ReferenceSystemPrompt, { ...PERSONA, emitChanges: true, parentOf: scopeParentOf }),
  service: (ctx) => ctx.referencePrompt as unknown as PromptService,
  render: referenceRenderPrompt,
  renderContextSnapshot: referenceRenderContextSnapshot,
}

export const IMPLS: readonly Impl[] = [reference, promptloom]

/** A small deterministic PRNG (mulberry32), so both implementations get the same world. */
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

/** Deterministic prose of exactly `length` characters. */
export function prose(rand: () => number, length: number): string {
  let out = ''
  while (out.length < length) out += WORDS[Math.floor(rand() * WORDS.length)] + (rand() < 0.1 ? '.\n' : ' ')
  return out.slice(0, length)
}

/** The 13 variables: mostly static strings, two signals (the `signal` scenarios'), one function. */
export const VARIABLES = ['model', 'cwd', 'date', 'user', 'os', 'shell', 'repo', 'branch', 'locale', 'plan', 'turn', 'clock', 'context_turn']

/** One agent of the world, with what its loop keeps between steps. */
export interface Agent {
  readonly index: number
  readonly key: object
  readonly scope: Scope
  /** The text of its late, volatile notes section (the changed-prompt scenario writes it). */
  readonly notes: Signal<string>
  /** The loop's last prompt and runtime-context snapshot (undefined before the first step). */
  prompt: LoopPrompt | undefined
  snapshot: string | undefined
}

/** How a step reads the prompt it built: the joined text, or each cache block (a provider request). */
export type PromptRead = 'text' | 'blocks'

export interface World {
  readonly app: Context
  /** The injected plugin context the registrations were made through. */
  readonly ctx: Context
  readonly impl: Impl
  readonly agents: Agent[]
  readonly turn: Signal<string>
  /** A per-step value referenced only from a runtime context. */
  readonly contextTurn: Signal<string>
  /** Mints the next agent (index = live agents so far) with its registrations; does not step it. */
  addAgent(): Agent
  /** One model step of `agent`: assemble, render, snapshot, keep both; returns a checksum of what was read. */
  step(agent: Agent, read?: PromptRead): Promise<number>
  /** Disposes every agent's scope and forgets the agents (the world stays). */
  disposeAgents(): Promise<void>
  dispose(): Promise<void>
}

/**
 * The section the `n`th churn step registers in its agent's scope: the churn
 * rows of bench/run.ts and every tool that times or profiles them
 * (phases.ts, profile.ts, gc.ts, ab.ts, loop-floor.ts's contender).
 */
export function churnSection(n: number): PromptSection {
  return { name: `churn-${n}`, order: 1000 + (n % 97), text: `Churn ${n} uses {{model}}.` }
}

/** A churn step's registry work: registers `churnSection(n)` in `agent`'s scope and disposes the registration 8 steps back (kept in `live`). */
export function churnRegistry(w: World, agent: Agent, n: number, live: (() => unknown)[]): void {
  live.push(w.impl.service(agent.scope.ctx).section(churnSection(n)))
  if (live.length > 8) live.shift()!()
}

/**
 * The churn step of `npm run bench` on `w`, round-robin over its agents: each
 * step registers one scoped section in the stepped agent and disposes the one
 * registered 8 steps earlier (`churnRegistry`). The loop reads the joined
 * text, or (`blocks`, promptloom only) each cache block, as a provider
 * request is built; the step resolves to a checksum of what it read.
 */
export function churnStep(w: World, read: PromptRead = 'text'): () => Promise<number> {
  let n = 0
  const live: (() => unknown)[] = []
  return () => {
    const agent = w.agents[n++ % w.agents.length]!
    churnRegistry(w, agent, n, live)
    return w.step(agent, w.impl.name === 'promptloom' ? read : 'text')
  }
}

export interface WorldOptions {
  /** Global sections. */
  readonly G: number
  /** Agents under one preset. */
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

function registerGlobals(sp: PromptService, G: number, rand: () => number, turn: Signal<string>, contextTurn: Signal<string>): void {
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
    sp.section({
      name: `section-${String(i).padStart(4, '0')}`,
      order: 100 + i * 10,
      text: i % 20 === 7 ? () => fixed : fixed,
      // Two cache breakpoints: halfway through the globals and after the last one.
      ...(i === G - 1 || i === (G >> 1) - 1 ? { cacheBreakpoint: true } : {}),
    })
  }
  for (let c = 0; c < 4; c++) {
    const text = c === 3 ? 'Turn {{turn}}.' : c === 2 ? `${prose(rand, 120)} Step {{context_turn}}.` : prose(rand, 120)
    sp.context({ name: `context-${c}`, order: 100 + c, text, required: c === 0 })
  }
  for (let p = 0; p < 4; p++) {
    const result = toolResult(rand, p)
    sp.tools(() => result)
  }
}

/** Reads a prompt the way its consumer would, so a lazy rope or join cannot hide work. */
function readPrompt(prompt: LoopPrompt, read: PromptRead): number {
  if (typeof prompt === 'string') return prompt.length + prompt.charCodeAt(prompt.length >> 1)
  if (read === 'text') return prompt.text.length + prompt.text.charCodeAt(prompt.text.length >> 1)
  let sum = 0
  for (const block of prompt.blocks) sum += block.text.length + block.text.charCodeAt(block.text.length >> 1)
  return sum
}

/** Builds the world of the file comment with G global sections and A agents. */
export async function buildWorld(impl: Impl, { G, A, seed = 42 }: WorldOptions): Promise<World> {
  const rand = random(seed)
  const { app, ctx, service, sp } = await mount(impl)
  const turn = signal('1')
  const contextTurn = signal('1')
  registerGlobals(sp, G, rand, turn, contextTurn)
  const preset = { name: 'preset' }
  const presetScope = createScope(ctx, preset)
  const agents: Agent[] = []
  const root = app as unknown as Record<string, PromptService>
  const world: World = {
    app,
    ctx,
    impl,
    agents,
    turn,
    contextTurn,
    addAgent() {
      const index = agents.length
      const own = random(seed * 7919 + index)
      const key = { name: `agent-${index}` }
      const scope = createScope(ctx, key, { parent: preset })
      const scoped = impl.service(scope.ctx)
      const workspace = `/work/agents/agent-${index}`
      const notes = signal(prose(own, 400))
      scoped.section({ name: 'section-0000', order: 100, text: `Agent ${index} overrides the first section.` })
      scoped.section({ name: `agent-${index}-role`, order: 50, text: `You are agent ${index}; your workspace is ${workspace} ({{cwd}}).` })
      scoped.section({ name: `agent-${index}-notes`, order: 5_000_000, text: notes, stability: 'volatile' })
      scoped.variable('cwd', workspace)
      scoped.context({ name: `agent-${index}-workspace`, order: 200, text: `Open in ${workspace}: ${prose(own, 80)}` })
      const agent: Agent = { index, key, scope, notes, prompt: undefined, snapshot: undefined }
      agents.push(agent)
      return agent
    },
    async step(agent, read = 'text') {
      const assembly = await root[service]!.assemble({ scope: agent.key })
      const prompt = impl.render(assembly)
      const snapshot = impl.renderContextSnapshot(assembly)
      agent.prompt = prompt
      agent.snapshot = snapshot
      return readPrompt(prompt, read) + snapshot.length + snapshot.charCodeAt(snapshot.length - 1)
    },
    async disposeAgents() {
      for (const agent of agents.splice(0)) await agent.scope.dispose()
    },
    async dispose() {
      await world.disposeAgents()
      await presetScope.dispose()
    },
  }
  for (let a = 0; a < A; a++) world.addAgent()
  return world
}
