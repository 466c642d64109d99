import { Context } from 'cordis'
import {
  createScope,
  renderContextSnapshot,
  renderPrompt,
  SystemPrompt,
  TOOL_ORDER_REST,
  type PromptInspection,
  type PromptStats,
  type Scope,
  type SystemPromptConfig,
  type ToolProviderResult,
  type ToolSchema,
} from '../../src/index.js'

// The seeded registry the reliability tests break things against:
//
//            global            intro, env, user, tools(bash, read)
//              ▲
//            preset            policy
//            ▲    ▲
//      agent-1    agent-2      task/job/cwd     task/cwd
//
// `fault` is read by every provider the tests register through `faulty`, so
// one flag turns a healthy provider into a throwing or wrong-typed one and
// back, without touching the registry.

export const CONFIG: SystemPromptConfig = { identity: 'You are {{user}}’s agent.', toolOrder: ['read', TOOL_ORDER_REST] }

const bash: ToolSchema = { name: 'bash', description: 'run a command', parameters: { type: 'object' } }
const read: ToolSchema = { name: 'read', description: 'read a file', parameters: { type: 'object' } }
/** The healthy global tool result; one object, so its schemas are cloned once. */
export const GLOBAL_TOOLS: ToolProviderResult = { schemas: [bash, read] }

export interface World {
  readonly app: Context
  readonly keys: { readonly preset: object; readonly agent1: object; readonly agent2: object }
  readonly scopes: { readonly preset: Scope; readonly agent1: Scope; readonly agent2: Scope }
  /** While `true`, every provider made by `faulty` misbehaves. */
  fault: boolean
  /** What the global tool provider returns while `fault` is set (`undefined`: its healthy result). */
  faultTools: unknown
  /** A provider that returns `good` normally and `bad()` (or what it throws) while `fault` is set. */
  faulty<T>(good: T, bad: () => unknown): () => T
  /** How many `system-prompt/change` events were emitted since the world was built. */
  readonly changes: { count: number }
}

/** Mounts the seeded registry above. */
export async function world(config: SystemPromptConfig = CONFIG): Promise<World> {
  const app = new Context()
  await app.plugin(SystemPrompt, config)
  const keys = { preset: { name: 'preset' }, agent1: { name: 'agent-1' }, agent2: { name: 'agent-2' } }
  let scopes!: World['scopes']
  await app.inject(['systemPrompt'], (ctx) => {
    scopes = {
      preset: createScope(ctx, keys.preset),
      agent1: createScope(ctx, keys.agent1, { parent: keys.preset }),
      agent2: createScope(ctx, keys.agent2, { parent: keys.preset }),
    }
  })
  const w: World = {
    app,
    keys,
    scopes,
    fault: false,
    faultTools: undefined,
    faulty: (good, bad) => () => (w.fault ? (bad() as typeof good) : good),
    changes: { count: 0 },
  }
  const sp = app.systemPrompt
  sp.section({ name: 'intro', order: 0, text: 'Hello {{user}}.' })
  sp.context({ name: 'env', order: 110, text: 'os: linux' })
  sp.variable('user', 'Ada')
  sp.tools(() => ((w.fault && w.faultTools) || GLOBAL_TOOLS) as ToolProviderResult)
  scopes.preset.ctx.systemPrompt.section({ name: 'policy', order: 500, text: 'Be careful.' })
  const a1 = scopes.agent1.ctx.systemPrompt
  a1.section({ name: 'task', order: 1000, text: 'Work in {{cwd}} for {{user}}.' })
  a1.context({ name: 'job', order: 120, text: 'job {{cwd}}', required: true })
  a1.variable('cwd', '/a1')
  const a2 = scopes.agent2.ctx.systemPrompt
  a2.section({ name: 'task', order: 1000, text: 'Idle in {{cwd}}.' })
  a2.variable('cwd', '/a2')
  app.on('system-prompt/change', () => void w.changes.count++)
  return w
}

/** Every view the tests compare: global, preset, agent-1, agent-2. */
export function viewsOf(w: World): (object | undefined)[] {
  return [undefined, w.keys.preset, w.keys.agent1, w.keys.agent2]
}

export type Settled<T> = { readonly ok: T } | { readonly error: string }

/** `f()`'s value, or the message of what it threw or rejected with. */
export async function settle<T>(f: () => T | Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: await f() }
  } catch (error) {
    return { error: error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error) }
  }
}

export interface Observation {
  readonly inspections: PromptInspection[]
  readonly assemblies: Settled<{ assembly: unknown; prompt: string; snapshot: string }>[]
}

/** What a harness can see of every view: inspections, assemblies and their renders (errors as messages). */
export async function observe(w: World): Promise<Observation> {
  const sp = w.app.systemPrompt
  const inspections = viewsOf(w).map((scope) => sp.inspect(scope))
  const assemblies: Observation['assemblies'] = []
  for (const scope of viewsOf(w)) {
    assemblies.push(
      await settle(async () => {
        const assembly = await sp.assemble({ scope })
        return { assembly, prompt: renderPrompt(assembly), snapshot: renderContextSnapshot(assembly) }
      }),
    )
  }
  return { inspections, assemblies }
}

/** `after - before` for every counter. */
export function delta(before: PromptStats, after: PromptStats): PromptStats {
  const out = { ...after }
  for (const key of Object.keys(out) as (keyof PromptStats)[]) out[key] -= before[key]
  return out
}
