/**
 * The promptloom demo harness (`npm start`): a Cordis app with the
 * SystemPrompt service, three plugins contributing sections, a tool provider,
 * variables, a preset scope with agent scopes under it, and a step loop in
 * which plugins load and unload and one variable changes. Each agent step is
 * assembled, rendered, fed to that agent's step surface and written to its
 * JSONL session log. Tokens are counted with gpt-tokenizer; agent-1 runs
 * under a token budget that must withhold a section when web-surface loads.
 *
 *   npm start -- --help
 */
import { mkdirSync } from 'node:fs'
import { dirname, extname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { computed, signal } from '@preact/signals-core'
import { Context, type Fiber } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import {
  CONTEXT_ORDERS,
  createScope,
  createStepSurface,
  PERSONA_PREFIX_SECTION,
  renderContextSnapshot,
  renderPrompt,
  SECTION_ORDERS,
  SystemPrompt,
  TOOL_ORDER_REST,
  type BudgetWarning,
  type PromptAssembly,
  type Scope,
  type StepResult,
  type StepSurface,
  type ToolSchema,
} from '../src/index.js'
import { writeReport } from '../src/cli/report.js'
import { createSessionLogWriter, type SessionLogWriter } from '../src/node.js'
import { traced } from './otel-setup.js'

/** agent-1's token budget: the demo's prompt is ~77 tokens, ~101 with web-surface loaded. */
const BUDGET = { maxTokens: 90, headroom: 0.1 } as const

const HELP = `promptloom demo harness

Usage: npm start -- [--agents N] [--steps N] [--log PATH]

  --agents N   agents under the preset scope "coder" (default 3)
  --steps N    model steps to simulate (default 20; the scripted plugin
               loads/unloads and the variable change happen in steps 4-17)
  --log PATH   session-log path (default ./logs/session.jsonl); each agent
               writes its own JSONL file, PATH with the agent's name before
               the extension (./logs/session.agent-1.jsonl, ...), truncated
               at start; the directory is created, and the HTML report of
               all agents goes next to them (./logs/report.html)
  -h, --help   show this help

Per step and agent it prints: how many system-prompt sections were
re-rendered (the rest came from the render memo), the share of the rendered
prompt that is byte-identical to that agent's previous step (the stable
KV-cache prefix), the reusable request prefix and token counts when the step
surface reports them, the time to assemble + render + record the step, and
which sections were added, removed or changed. The last step prints agent-1's full prompt, its runtime-context
snapshot and the service's stats().

Tokens are counted with gpt-tokenizer. agent-1 runs under a token budget
(maxTokens ${BUDGET.maxTokens}, headroom ${BUDGET.headroom * 100}%): when web-surface loads (step 4) its
prompt no longer fits, so the budget withholds the lowest-priority section
(tools:guidance, priority -1); it stays withheld after planning unloads
(step 8: it would fit maxTokens again, but not the headroom) and comes back
when web-surface unloads (step 17).`

interface Options {
  readonly agents: number
  readonly steps: number
  readonly log: string
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      agents: { type: 'string' },
      steps: { type: 'string' },
      log: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help === true) return 'help'
  const count = (flag: string, raw: string | undefined, fallback: number): number => {
    if (raw === undefined) return fallback
    const value = Number(raw)
    if (!Number.isSafeInteger(value) || value < 1 || value > 1000) {
      throw new TypeError(`--${flag} must be an integer from 1 to 1000 (got "${raw}")`)
    }
    return value
  }
  return {
    agents: count('agents', values.agents, 3),
    steps: count('steps', values.steps, 20),
    log: values.log ?? './logs/session.jsonl',
  }
}

/** `logs/session.jsonl` → `logs/session.agent-1.jsonl`. */
function logPathFor(base: string, agent: string): string {
  const ext = extname(base)
  return ext === '' ? `${base}.${agent}.jsonl` : `${base.slice(0, -ext.length)}.${agent}${ext}`
}

// ── the plugins ────────────────────────────────────────────────────────────

const schema = (name: string, description: string): ToolSchema => ({
  name,
  description,
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
})
const TOOLBOX = [
  schema('bash', 'Run a shell command in the workspace.'),
  schema('edit', 'Replace text in a file.'),
  schema('grep', 'Search files for a pattern.'),
  schema('read', 'Read a file.'),
]
const BROWSE = [schema('browse', 'Open a page of the local web UI.')]

/** Plan-first policy: one static section. */
const planning = {
  name: 'planning',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    ctx.systemPrompt.section({
      name: 'plan:policy',
      order: SECTION_ORDERS.PLAN_POLICY,
      text: 'Before changing code, write a short plan and keep it updated as you work.',
      stability: 'static',
    })
  },
}

/** Tool guidance plus the tool provider (a function provider: evaluated on every assembly). */
const toolbox = {
  name: 'toolbox',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    ctx.systemPrompt.section({
      name: 'tools:guidance',
      order: SECTION_ORDERS.TOOL_GUIDANCE,
      text: 'Read a file before you edit it. Prefer grep over reading whole directories.',
      stability: 'static',
      // Helpful but optional: the first section a token budget withholds.
      priority: -1,
    })
    // Returns the same schema objects every time, so they are cloned once.
    ctx.systemPrompt.tools(() => ({ schemas: TOOLBOX }))
  },
}

/** The local web surface: a late section, a variable it references, and one more tool. */
const webSurface = {
  name: 'web-surface',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    ctx.systemPrompt.variable('web_url', 'http://127.0.0.1:7410', { stability: 'session' })
    ctx.systemPrompt.section({
      name: 'web:surface',
      order: SECTION_ORDERS.WEB_SURFACE,
      text: 'The user watches this session in the web UI at {{web_url}}.',
      stability: 'session',
    })
    ctx.systemPrompt.tools(() => ({ schemas: BROWSE }))
  },
}

// ── the harness ────────────────────────────────────────────────────────────

interface Agent {
  readonly key: { readonly name: string }
  readonly scope: Scope
  readonly surface: StepSurface
  readonly log: SessionLogWriter
}

async function main(argv: string[]): Promise<void> {
  const options = parseOptions(argv)
  if (options === 'help') {
    console.log(HELP)
    return
  }
  const started = performance.now()

  const app = new Context()
  await app.plugin(SystemPrompt, {
    identity: 'You are Loom, a coding agent running inside the promptloom demo harness.',
    personaPrefix: 'You work for {{team}}. Be concise and precise.',
    personaSuffix: 'Environment: git branch {{branch}}, working directory {{cwd}}.',
    toolOrder: ['read', 'edit', 'bash', TOOL_ORDER_REST],
  })
  const prompt = app.systemPrompt

  // Global variables: a fixed string, and a signal the harness writes later.
  const branch = signal('main')
  prompt.variable('team', 'the platform team', { stability: 'static' })
  prompt.variable('branch', branch, { stability: 'session' })
  // Global runtime context: a required policy and a per-step clock.
  const turn = signal(0)
  prompt.context({
    name: 'policy:approval',
    order: CONTEXT_ORDERS.APPROVAL_POLICY,
    text: 'Ask before running commands outside the working directory.',
    required: true,
  })
  prompt.context({
    name: 'session:clock',
    order: 200,
    text: computed(() => `This is model step ${turn.value}.`),
    stability: 'volatile',
  })

  // A preset scope with the agents under it, minted from a plugin that injects systemPrompt.
  const presetKey = { name: 'coder' }
  const keys = Array.from({ length: options.agents }, (_, i) => ({ name: `agent-${i + 1}` }))
  let preset!: Scope
  let scopes!: Scope[]
  await app.inject(['systemPrompt'], (ctx) => {
    preset = createScope(ctx, presetKey)
    scopes = keys.map((key) => createScope(ctx, key, { parent: presetKey }))
  })

  mkdirSync(dirname(options.log), { recursive: true })
  const agents: Agent[] = keys.map((key, i) => {
    const scope = scopes[i]!
    // Per-agent variable: paths differ across agents, only in the persona suffix.
    scope.ctx.systemPrompt.variable('cwd', `/work/${key.name}`, { stability: 'session' })
    return {
      key,
      scope,
      // agent-1 under a token budget (its countTokens also gives the token figures); the others only count.
      surface: traced(createStepSurface(i === 0 ? { budget: { ...BUDGET, countTokens } } : { countTokens }), key.name),
      log: createSessionLogWriter(logPathFor(options.log, key.name), { truncate: true }),
    }
  })
  // agent-2 has its own persona prefix, shadowing the deployment one.
  agents[1]?.scope.ctx.systemPrompt.section({
    name: PERSONA_PREFIX_SECTION,
    order: SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX,
    text: 'You review pull requests for {{team}}; you never push code yourself.',
  })
  const lastAgent = agents[agents.length - 1]!

  // The scripted session: plugins load and unload, one variable changes.
  const fibers = new Map<string, Fiber>()
  const load = async (label: string, ctx: Context, plugin: typeof planning): Promise<void> => {
    fibers.set(label, await ctx.plugin(plugin))
  }
  const unload = async (label: string): Promise<void> => {
    await fibers.get(label)!.dispose()
    fibers.delete(label)
  }
  const script: Record<number, { what: string; run: () => Promise<void> | void }> = {
    4: { what: 'load web-surface (global)', run: () => load('web-surface', app, webSurface) },
    8: { what: 'unload planning (global)', run: () => unload('planning') },
    11: { what: 'variable branch: "main" -> "feature/login" (a signal write)', run: () => void (branch.value = 'feature/login') },
    14: {
      what: `load planning into ${lastAgent.key.name}'s scope only`,
      run: () => load('planning@agent', lastAgent.scope.ctx, planning),
    },
    17: { what: 'unload web-surface (global)', run: () => unload('web-surface') },
  }

  console.log(`promptloom demo: ${options.agents} agent(s) under preset "coder", ${options.steps} step(s)`)
  console.log(`session logs: ${agents.map((agent) => agent.log.path).join(', ')}`)
  console.log(`budget: ${keys[0]!.name} runs under maxTokens ${BUDGET.maxTokens} (headroom ${BUDGET.headroom * 100}%); tokens counted with gpt-tokenizer`)
  console.log('boot: load planning (global), toolbox (preset "coder")')
  await load('planning', app, planning)
  await load('toolbox', preset.ctx, toolbox)
  // Where each agent's effective entries come from (inspect), when not all global.
  for (const agent of agents) {
    const view = prompt.inspect(agent.key)
    const own = [...view.sections, ...view.variables]
      .filter((entry) => entry.layer !== 'global')
      .map((entry) => {
        const from = entry.layer === agent.key ? '' : ` from ${(entry.layer as { name: string }).name}`
        const shadows = entry.shadows.length > 0 ? ` (shadows ${entry.shadows.map((l) => (l === 'global' ? 'global' : (l as { name: string }).name)).join(', ')})` : ''
        return `${entry.name}${from}${shadows}`
      })
    console.log(`  ${agent.key.name}: scoped entries ${own.join(', ')}; ${view.tools.length} tool provider(s)`)
  }

  const width = Math.max(...keys.map((key) => key.name.length))
  const previousSections = new Map<Agent, readonly string[]>()
  let featured: { text: string; assembly: PromptAssembly; withheld: readonly string[] } | undefined
  for (let step = 1; step <= options.steps; step++) {
    const event = script[step]
    if (event !== undefined) {
      console.log(`step ${String(step).padStart(2)}  -- ${event.what}`)
      await event.run()
    }
    turn.value = step
    for (const agent of agents) {
      const before = prompt.stats().sectionRenders
      const t0 = performance.now()
      const assembly = await prompt.assemble({ scope: agent.key })
      renderPrompt(assembly)
      const rendered = prompt.stats().sectionRenders - before
      const result = agent.surface.step({ assembly, config: { model: 'deepseek-chat', temperature: 0 } })
      const ms = performance.now() - t0
      agent.log.write(result)

      // What the model is sent: the rendered prompt less any section the budget withheld.
      const { text } = result.rendered
      const prefix = step === 1 ? '   first' : `${((100 * result.stablePrefixLength) / Math.max(text.length, 1)).toFixed(1).padStart(6)}%`
      const names = result.rendered.parts.map((part) => part.name)
      const budget = result.warnings.filter((warning): warning is BudgetWarning => 'sections' in warning)
      // A section the budget withheld or restored is reported as such, not as removed or added.
      const moved = new Set(budget.flatMap((warning) => (warning.kind === 'over-budget' ? [] : warning.sections)))
      const notes: string[] =
        step === 1
          ? ['first render; request header initial']
          : sectionNotes(
              result.changedSections.filter((name) => !moved.has(name)),
              (previousSections.get(agent) ?? []).filter((name) => !moved.has(name)),
              names.filter((name) => !moved.has(name)),
            )
      previousSections.set(agent, names)
      const header = result.events.find((e) => e.type === 'request/header')
      if (header !== undefined && step > 1) notes.push(header.reason)
      for (const warning of budget) notes.push(`budget: ${warning.kind} ${warning.sections.join(', ')}`)
      for (const warning of result.warnings) if (!budget.includes(warning as BudgetWarning)) notes.push(`lint: ${warning.message}`)
      console.log(
        `step ${String(step).padStart(2)}  ${agent.key.name.padEnd(width)}  re-rendered ${rendered}/${assembly.sections.length} sections` +
          `  prefix ${prefix}${surfaceFigures(result)}  ${ms.toFixed(2).padStart(5)} ms${notes.length > 0 ? `  ${notes.join('; ')}` : ''}`,
      )
      if (agent === agents[0]) featured = { text, assembly, withheld: result.withheld ?? [] }
    }
  }

  const name = agents[0]!.key.name
  const held = featured!.withheld.length === 0 ? '' : `, withheld by the budget: ${featured!.withheld.join(', ')}`
  console.log(`\n===== ${name}: rendered system prompt, final step (${featured!.text.length} chars${held}) =====`)
  console.log(featured!.text)
  console.log(`\n===== ${name}: runtime-context snapshot =====`)
  console.log(renderContextSnapshot(featured!.assembly))
  console.log(`\n===== ${name}: tools, in toolOrder =====`)
  console.log(featured!.assembly.tools.map((tool) => tool.name).join(', '))
  console.log('\n===== stats() =====')
  for (const [key, value] of Object.entries(prompt.stats())) console.log(`${key.padEnd(20)} ${value}`)
  console.log(
    '(sectionRenders and renderCacheHits count sections and runtime contexts per render call; each step here renders\n' +
      ' the prompt twice, once to count re-renders and once inside the step surface, whose second pass is all hits)',
  )
  for (const agent of agents) await agent.scope.dispose()
  console.log(`\nsession logs written: ${agents.map((agent) => agent.log.path).join(', ')}`)
  const report = writeReport(
    agents.map((agent) => agent.log.path),
    join(dirname(options.log), 'report.html'),
  )
  console.log(`report written: ${report}  (again: ${reportCommand(agents.map((agent) => agent.log.path), report)})`)
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(2)} s`)
}

/**
 * The command that writes the report again: in this repository the CLI runs
 * from source through `npm run report` (installed, it is `npx promptloom
 * report`). npm runs scripts in the repository root, so paths inside it are
 * given from there and others in full.
 */
function reportCommand(logs: readonly string[], output: string): string {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const shown = (path: string): string => {
    const fromRoot = relative(root, resolve(path))
    const arg = fromRoot.startsWith('..') || isAbsolute(fromRoot) ? resolve(path) : fromRoot
    return /^[\w./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`
  }
  return `npm run report -- ${logs.map(shown).join(' ')} -o ${shown(output)}`
}

/** `added x; removed y; changed z` from the surface's changed list and the two steps' section names. */
function sectionNotes(changed: readonly string[], before: readonly string[], now: readonly string[]): string[] {
  const added = now.filter((name) => !before.includes(name))
  const removed = before.filter((name) => !now.includes(name))
  const rest = changed.filter((name) => !added.includes(name) && !removed.includes(name))
  const notes: string[] = []
  if (added.length > 0) notes.push(`added ${added.join(', ')}`)
  if (removed.length > 0) notes.push(`removed ${removed.join(', ')}`)
  if (rest.length > 0) notes.push(`changed ${rest.join(', ')}`)
  return notes
}

/** The step result's reusable prefix, its tokens (stable/prompt) and, under a budget, how many sections are withheld. */
function surfaceFigures(result: StepResult): string {
  const length = Math.max(result.rendered.text.length, 1)
  let out = `  reusable ${((100 * result.reusablePrefixLength) / length).toFixed(1).padStart(5)}%`
  if (result.promptTokens !== undefined) out += `  tokens ${`${result.stablePrefixTokens}/${result.promptTokens}`.padStart(7)}`
  if (result.withheld !== undefined) out += `  withheld ${result.withheld.length}${result.overBudget === true ? ' (over budget)' : ''}`
  return out
}

try {
  await main(process.argv.slice(2))
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)} (see --help)`)
  process.exitCode = 1
}
