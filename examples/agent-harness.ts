/**
 * The promptloom demo harness (`npm start`): a Cordis app with the
 * SystemPrompt service, three plugins contributing sections, a tool provider,
 * variables, a preset scope with agent scopes under it, and a step loop in
 * which plugins load and unload and one variable changes. Each agent step is
 * assembled, rendered, fed to that agent's step surface, sent to the local
 * provider cache simulator (examples/simulator/, a simulation of Anthropic's
 * documented caching rules, not Anthropic) as an Anthropic Messages request,
 * and written to its JSONL session log with the usage the simulator reported.
 * Tokens are counted with gpt-tokenizer; agent-1, a sub-agent with a brief of
 * its own, runs under a tight token budget that must withhold a section when
 * web-surface loads, and withholds its own brief rather than a section it
 * shares with the other agents (budget shared: 'prefer-unshared').
 *
 *   npm start -- --help
 */
import { mkdirSync } from 'node:fs'
import { dirname, extname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import Anthropic from '@anthropic-ai/sdk'
import { computed, signal } from '@preact/signals-core'
import { Context, type Fiber } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import {
  cacheRules,
  comparePrompts,
  CONTEXT_ORDERS,
  createScope,
  createStepSurface,
  historyOf,
  PERSONA_PREFIX_SECTION,
  renderContextSnapshot,
  renderPrompt,
  SECTION_ORDERS,
  SystemPrompt,
  toAnthropic,
  TOOL_ORDER_REST,
  usageFromAnthropic,
  type BudgetWarning,
  type PromptAssembly,
  type Scope,
  type StepResult,
  type StepSurface,
  type ToolSchema,
  type UsageRecord,
} from '../src/index.js'
import { breakText } from '../src/cli/inspect.js'
import { writeReport } from '../src/cli/run.js'
import { createSessionLogWriter, type SessionLogWriter } from '../src/node.js'
import { traced } from './otel-setup.js'
import { startSimulator } from './simulator/index.js'

/** agent-1's token budget: its prompt is ~98 tokens, ~122 with web-surface loaded. */
const BUDGET = { maxTokens: 110, headroom: 0.1, shared: 'prefer-unshared' } as const
/** The other agents' budget: room for any prompt of this demo (the model's context is the limit). */
const ROOMY_BUDGET = { maxTokens: 4000 } as const
const MODEL = 'claude-sonnet-4-6'
/**
 * The demo's prompts are far below any Claude model's minimum cacheable
 * prefix (1024 tokens for this one), so the simulator and the cache rules are
 * both told this model caches from 64 tokens; everything else follows the
 * documented rules.
 */
const DEMO_MINIMUM_TOKENS = 64

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

Each step's request (toAnthropic) goes to the local provider cache
simulator (examples/simulator/: Anthropic's documented caching rules, with a
${DEMO_MINIMUM_TOKENS}-token minimum so this small prompt caches), and the usage it reports is
logged beside the step, so the report compares expected and observed cache
reuse.

Tokens are counted with gpt-tokenizer. agent-1 is a sub-agent with a brief
of its own (agent:brief) under a token budget (maxTokens ${BUDGET.maxTokens}, headroom
${BUDGET.headroom * 100}%, shared: '${BUDGET.shared}'): when web-surface loads (step 4) its prompt no
longer fits. The usual rule would withhold the lowest-priority section, the
preset's tools:guidance, and agent-1 would stop sharing its prompt with the
other agents from there; with 'prefer-unshared' the budget withholds agent-1's
own brief instead, which lies after the prefix it shares. It stays withheld
after planning unloads (step 8: it would fit maxTokens again, but not the
headroom) and comes back when web-surface unloads (step 17).`

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
  /** The conversation sent to the model so far. */
  history: Anthropic.MessageParam[]
}

async function main(argv: string[]): Promise<void> {
  const options = parseOptions(argv)
  if (options === 'help') {
    console.log(HELP)
    return
  }
  const started = performance.now()
  const simulator = await startSimulator({ anthropicMinimumTokens: { [MODEL]: DEMO_MINIMUM_TOKENS } })
  const client = new Anthropic({ apiKey: 'unused', baseURL: simulator.baseURL('anthropic'), maxRetries: 0 })
  const rules = cacheRules.anthropic({ model: MODEL, minimumTokens: DEMO_MINIMUM_TOKENS })

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
      // agent-1 under a tight token budget, the others under a roomy one (each budget's countTokens also gives the token figures).
      surface: traced(createStepSurface({ budget: { ...(i === 0 ? BUDGET : ROOMY_BUDGET), countTokens }, cacheRules: rules }), key.name),
      log: createSessionLogWriter(logPathFor(options.log, key.name), { truncate: true }),
      history: [{ role: 'user', content: 'The login test fails. Find out why and fix it.' }],
    }
  })
  // agent-1 is a sub-agent: its brief is its own, after every shared section.
  agents[0]!.scope.ctx.systemPrompt.section({
    name: 'agent:brief',
    order: SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX + 100,
    text: 'You are a sub-agent of the coordinator: report what you found in under 200 words, and never edit files outside src/login.',
  })
  // agent-2 has its own persona prefix, shadowing the deployment one.
  agents[1]?.scope.ctx.systemPrompt.section({
    name: PERSONA_PREFIX_SECTION,
    order: SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX,
    text: 'You review pull requests for {{team}}; you never push code yourself.',
  })
  const lastAgent = agents[agents.length - 1]!
  /** A stand-in key for the usual-rule surface's results. */
  const usualAgent = { key: { name: 'usual rule' } } as Agent

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
  console.log(
    `budget: ${keys[0]!.name} runs under maxTokens ${BUDGET.maxTokens} (headroom ${BUDGET.headroom * 100}%, shared: '${BUDGET.shared}'), the others under ${ROOMY_BUDGET.maxTokens}; tokens counted with gpt-tokenizer`,
  )
  console.log(`provider: ${MODEL} on the local cache simulator (${simulator.url}; caching from ${DEMO_MINIMUM_TOKENS} tokens)`)
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
  // agent-1's budget as the usual rule would run it, stepped beside the real one (not logged), to show what 'prefer-unshared' keeps shared.
  const usualRule = createStepSurface({ budget: { ...BUDGET, shared: 'ignore', countTokens } })
  for (let step = 1; step <= options.steps; step++) {
    const event = script[step]
    if (event !== undefined) {
      console.log(`step ${String(step).padStart(2)}  -- ${event.what}`)
      await event.run()
    }
    turn.value = step
    const sent = new Map<Agent, StepResult>()
    for (const agent of agents) {
      const before = prompt.stats().sectionRenders
      const t0 = performance.now()
      const assembly = await prompt.assemble({ scope: agent.key })
      renderPrompt(assembly)
      const rendered = prompt.stats().sectionRenders - before
      const result = agent.surface.step({ assembly, config: { model: MODEL, max_tokens: 256 } })
      const ms = performance.now() - t0
      agent.log.write(result)
      const usage = await send(client, agent, assembly, result)

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
      if (result.cacheBreak !== undefined) {
        const { layer, ...cause } = result.cacheBreak
        notes.push(`lost reuse at ${breakText(layer === undefined ? cause : { ...cause, layer: layerName(layer) })}`)
      }
      console.log(
        `step ${String(step).padStart(2)}  ${agent.key.name.padEnd(width)}  re-rendered ${rendered}/${assembly.sections.length} sections` +
          `  prefix ${prefix}${surfaceFigures(result)}  cached ${`${usage.cachedInputTokens}/${usage.inputTokens}`.padStart(7)}` +
          `  ${ms.toFixed(2).padStart(5)} ms${notes.length > 0 ? `  ${notes.join('; ')}` : ''}`,
      )
      if (agent === agents[0]) featured = { text, assembly, withheld: result.withheld ?? [] }
      sent.set(agent, result)
      if (agent === agents[0]) sent.set(usualAgent, usualRule.step({ assembly, config: { model: MODEL, max_tokens: 256 } }))
    }
    const sub = sent.get(agents[0]!)!
    if (agents.length > 1 && sub.warnings.some((warning) => 'sections' in warning && warning.kind === 'withheld')) {
      console.log(`         sharing  ${sharingNote(agents[0]!.key.name, sub, sent.get(usualAgent)!, lastAgent.key.name, sent.get(lastAgent)!)}`)
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
  await simulator.close()
  console.log(`\nsession logs written: ${agents.map((agent) => agent.log.path).join(', ')}`)
  const report = writeReport(
    agents.map((agent) => agent.log.path),
    join(dirname(options.log), 'report.html'),
  )
  console.log(`report written: ${report}  (again: ${reportCommand(agents.map((agent) => agent.log.path), report)})`)
  console.log(`check them in CI: ${reportCommand(agents.map((agent) => agent.log.path), undefined)}`)
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(2)} s`)
}

/**
 * Sends the step's request (the budgeted prompt the surface compared, its
 * tools and the agent's history) to the simulator, logs the usage it reports
 * beside the step, and keeps the history for the next step.
 */
async function send(client: Anthropic, agent: Agent, assembly: PromptAssembly, result: StepResult): Promise<UsageRecord> {
  const request = toAnthropic({ assembly, rendered: result.rendered, messages: agent.history })
  const reply = await client.messages.create({ model: MODEL, max_tokens: 256, ...request })
  const usage = agent.surface.observeUsage(usageFromAnthropic(reply.usage))
  agent.log.writeUsage(usage)
  agent.history = [...historyOf(request), { role: 'assistant', content: reply.content }, { role: 'user', content: 'Go on.' }]
  return usage
}

/**
 * The command that writes the report again (or, without an output, checks
 * the logs against the thresholds this scripted session meets): in this
 * repository the CLI runs from source through `npm run report` / `npm run
 * check` (installed, it is `npx promptloom report` / `check`). npm runs scripts in the repository root, so paths inside it are
 * given from there and others in full.
 */
function reportCommand(logs: readonly string[], output: string | undefined): string {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const shown = (path: string): string => {
    const fromRoot = relative(root, resolve(path))
    const arg = fromRoot.startsWith('..') || isAbsolute(fromRoot) ? resolve(path) : fromRoot
    return /^[\w./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`
  }
  if (output === undefined) return `npm run check -- ${logs.map(shown).join(' ')} --min-reusable 0.75 --max-breaks 5`
  return `npm run report -- ${logs.map(shown).join(' ')} -o ${shown(output)}`
}

/**
 * What the sub-agent's budget kept shared with a sibling this step, next to
 * what the usual rule (withhold the lowest priority, later first) would have
 * kept.
 */
function sharingNote(name: string, budgeted: StepResult, usual: StepResult, sibling: string, theirs: StepResult): string {
  const shared = (result: StepResult): string => {
    const { length, firstDifferentPart } = comparePrompts(result.rendered, theirs.rendered)
    return `${length} chars with ${sibling}${firstDifferentPart === undefined ? '' : ` (diverging in ${firstDifferentPart.a})`}`
  }
  return (
    `${name} withheld ${budgeted.withheld!.join(', ')} (budget shared: '${BUDGET.shared}') and shares ${shared(budgeted)}; ` +
    `the usual rule would withhold ${usual.withheld!.join(', ')} and share ${shared(usual)}`
  )
}

/** A layer as the log names it: `'global'` or the scope's name. */
function layerName(layer: 'global' | object): string {
  return layer === 'global' ? 'global' : (layer as { name: string }).name
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
