/**
 * `npm run bench:cache` — what a provider's prompt cache serves, and what
 * the session costs, when a realistic multi-agent session's requests are
 * built by promptloom, against a naive harness that sends the same content.
 * The requests go to the provider cache simulator (examples/simulator/), which
 * applies the providers' documented caching rules: the figures are what those
 * rules give, not measurements of a provider.
 *
 *   world     200 global sections of 200–1500 characters (bench/workload.ts's
 *             mix: unannotated, cacheBreakpoint after the middle and the last
 *             one, a third with {{variable}} references, 5 % function
 *             providers), 13 variables, 4 runtime contexts (one shows the step
 *             number), 40 tools from 4 providers
 *   presets   3, each with its own charter section and a plugin that loads
 *             (and for two of them unloads) tools and a section mid-session
 *   agents    10 per preset: a role section, a shadow of the first global
 *             section, a late volatile notes section (rewritten every 10
 *             steps), its cwd and a workspace context
 *   session   50 steps per agent, each a tool call (one in five two calls)
 *             whose output of 400–4000 characters joins the history, with the
 *             runtime-context snapshot; 20 s of simulated time per step
 *   harnesses promptloom: toAnthropic (markers on the stable run, the tools
 *             and the history) and toOpenAIChat with promptCacheKey: true.
 *             naive: the same tools and messages, the system prompt as one
 *             string with one marker at its end (Anthropic); the same request
 *             without a prompt_cache_key (OpenAI)
 *
 * Prices per input token, relative to an uncached one: Anthropic reads 0.1,
 * 5-minute writes 1.25, 1-hour writes 2 (Anthropic's prompt caching pricing);
 * OpenAI cached input 0.1 (GPT-5's cached-input price). Output tokens are the
 * same for both harnesses and left out.
 */
import type Anthropic from '@anthropic-ai/sdk'
import { signal } from '@preact/signals-core'
import { Context, type Fiber } from 'cordis'
import { createCacheSimulator, type CacheSimulator, type SimulatedExchange } from '../examples/simulator/index.js'
import {
  createScope,
  historyOf,
  render,
  renderContextSnapshot,
  SystemPrompt,
  toAnthropic,
  toOpenAIChat,
  type PromptAssembly,
  type Scope,
  type ToolProviderResult,
} from '../src/index.js'
import type OpenAI from 'openai'
import { PERSONA, prose, random, VARIABLES } from './workload.js'

const G = 200
const PRESETS = 3
const AGENTS_PER_PRESET = 10
const STEPS = 50
const STEP_MS = 20_000
const ANTHROPIC_MODEL = 'claude-sonnet-4-6'
const OPENAI_MODEL = 'gpt-5'

type AnthropicMessage = Anthropic.MessageParam
type OpenAIMessage = OpenAI.Chat.ChatCompletionMessageParam

interface Agent {
  readonly index: number
  readonly key: object
  readonly scope: Scope
  readonly notes: ReturnType<typeof signal<string>>
  readonly rand: () => number
  anthropic: AnthropicMessage[]
  openai: OpenAIMessage[]
}

/** One harness at one provider: its simulator and what the simulator reported. */
interface Harness {
  readonly name: string
  readonly sim: CacheSimulator
  readonly totals: { input: number; cached: number; write5m: number; write1h: number; cost: number; requests: number }
  readonly bySection: { tools: number; system: number; messages: number; cachedTools: number; cachedSystem: number; cachedMessages: number }
}

function harness(name: string): Harness {
  return {
    name,
    sim: createCacheSimulator(),
    totals: { input: 0, cached: 0, write5m: 0, write1h: 0, cost: 0, requests: 0 },
    bySection: { tools: 0, system: 0, messages: 0, cachedTools: 0, cachedSystem: 0, cachedMessages: 0 },
  }
}

/** Sends `body` and adds its usage and its cost at `prices` to the harness's totals. */
function send(h: Harness, path: string, body: Record<string, unknown>, anthropic: boolean): void {
  const exchange: SimulatedExchange = h.sim.handle(path, body)
  if (exchange.status !== 200) throw new Error(`${h.name}: the simulator answered ${exchange.status}: ${JSON.stringify(exchange.response)}`)
  const t = h.totals
  t.requests++
  t.input += exchange.promptTokens
  t.cached += exchange.cachedTokens
  if (anthropic) {
    const usage = exchange.response.usage as { cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } }
    const write5m = usage.cache_creation.ephemeral_5m_input_tokens
    const write1h = usage.cache_creation.ephemeral_1h_input_tokens
    t.write5m += write5m
    t.write1h += write1h
    t.cost += exchange.promptTokens - exchange.cachedTokens - write5m - write1h + 0.1 * exchange.cachedTokens + 1.25 * write5m + 2 * write1h
  } else {
    t.cost += exchange.promptTokens - exchange.cachedTokens + 0.1 * exchange.cachedTokens
  }
  const s = h.bySection
  s.tools += exchange.promptTokensBySection.tools
  s.system += exchange.promptTokensBySection.system
  s.messages += exchange.promptTokensBySection.messages
  s.cachedTools += exchange.cachedTokensBySection.tools
  s.cachedSystem += exchange.cachedTokensBySection.system
  s.cachedMessages += exchange.cachedTokensBySection.messages
}

function toolResult(rand: () => number, provider: string, count: number): ToolProviderResult {
  const schemas = []
  for (let t = 0; t < count; t++) {
    const properties: Record<string, unknown> = {}
    const params = 5 + Math.floor(rand() * 11)
    for (let p = 0; p < params; p++) properties[`arg_${p}`] = { type: p % 3 === 0 ? 'number' : 'string', description: prose(rand, 60 + Math.floor(rand() * 80)) }
    schemas.push({ name: `${provider}_${t}`, description: prose(rand, 200 + Math.floor(rand() * 300)), parameters: { type: 'object', properties, required: Object.keys(properties).slice(0, 2) } })
  }
  return { schemas }
}

/** A plugin a preset loads mid-session: `count` tools and a section about them. */
function toolPlugin(name: string, count: number, rand: () => number) {
  const tools = toolResult(rand, name, count)
  const guidance = prose(rand, 600)
  return {
    name,
    inject: ['systemPrompt'],
    apply(ctx: Context) {
      ctx.systemPrompt.section({ name: `${name}:guidance`, order: 1500, text: guidance })
      ctx.systemPrompt.tools(() => tools)
    },
  }
}

async function buildWorld() {
  const rand = random(42)
  const app = new Context()
  await app.plugin(SystemPrompt, PERSONA)
  let ctx!: Context
  await app.inject(['systemPrompt'], (injected) => {
    ctx = injected
  })
  const sp = ctx.systemPrompt
  const contextTurn = signal('1')
  for (const name of VARIABLES) {
    if (name === 'context_turn') sp.variable(name, contextTurn)
    else if (name === 'clock') sp.variable(name, () => 'step')
    else sp.variable(name, `${name}-value-${Math.floor(rand() * 1000)}`)
  }
  for (let i = 0; i < G; i++) {
    let text = prose(rand, 200 + Math.floor(rand() * 1300))
    if (i % 3 === 0) {
      const refs = 1 + Math.floor(rand() * 3)
      const at = Array.from({ length: refs }, () => Math.floor(rand() * text.length)).sort((a, b) => b - a)
      for (const position of at) text = `${text.slice(0, position)} {{${VARIABLES[Math.floor(rand() * 8)]}}} ${text.slice(position)}`
    }
    const fixed = text
    sp.section({
      name: `section-${String(i).padStart(4, '0')}`,
      order: 100 + i * 10,
      text: i % 20 === 7 ? () => fixed : fixed,
      ...(i === G - 1 || i === (G >> 1) - 1 ? { cacheBreakpoint: true } : {}),
    })
  }
  for (let c = 0; c < 4; c++) {
    const text = c === 2 ? `${prose(rand, 120)} Step {{context_turn}}.` : prose(rand, 120)
    sp.context({ name: `context-${c}`, order: 100 + c, text, required: c === 0 })
  }
  for (let p = 0; p < 4; p++) {
    const result = toolResult(rand, `tool_${p}`, 10)
    sp.tools(() => result)
  }

  const agents: Agent[] = []
  const presets: { scope: Scope; plugin: ReturnType<typeof toolPlugin>; load: number; unload: number | undefined; fiber?: Fiber }[] = []
  const schedule: readonly [load: number, unload: number | undefined, tools: number][] = [
    [10, 30, 2],
    [20, undefined, 1],
    [5, 40, 3],
  ]
  for (let p = 0; p < PRESETS; p++) {
    const presetKey = { name: `preset-${p}` }
    const scope = createScope(ctx, presetKey)
    scope.ctx.systemPrompt.section({ name: `preset-${p}-charter`, order: 60, text: prose(rand, 800) })
    const [load, unload, tools] = schedule[p]!
    presets.push({ scope, plugin: toolPlugin(`plugin_${p}`, tools, rand), load, unload })
    for (let a = 0; a < AGENTS_PER_PRESET; a++) {
      const index = agents.length
      const own = random(42 * 7919 + index)
      const key = { name: `agent-${index}` }
      const agentScope = createScope(ctx, key, { parent: presetKey })
      const scoped = agentScope.ctx.systemPrompt
      const workspace = `/work/agents/agent-${index}`
      const notes = signal(prose(own, 400))
      scoped.section({ name: 'section-0000', order: 100, text: `Agent ${index} overrides the first section.` })
      scoped.section({ name: `agent-${index}-role`, order: 50, text: `You are agent ${index}; your workspace is ${workspace} ({{cwd}}).` })
      scoped.section({ name: `agent-${index}-notes`, order: 5_000_000, text: notes, stability: 'volatile' })
      scoped.variable('cwd', workspace)
      scoped.context({ name: `agent-${index}-workspace`, order: 200, text: `Open in ${workspace}: ${prose(own, 80)}` })
      const task = `Task for agent ${index}: ${prose(own, 300)}`
      agents.push({ index, key, scope: agentScope, notes, rand: own, anthropic: [{ role: 'user', content: task }], openai: [{ role: 'user', content: task }] })
    }
  }
  return { app, sp, contextTurn, agents, presets }
}

/** The step's tool calls (one, or two in one step of five) and their outputs, the same for both providers. */
function toolCalls(agent: Agent, assembly: PromptAssembly, step: number): { id: string; name: string; input: Record<string, unknown>; output: string }[] {
  const count = agent.rand() < 0.2 ? 2 : 1
  return Array.from({ length: count }, (_, c) => {
    const tool = assembly.tools[Math.floor(agent.rand() * assembly.tools.length)]!
    return {
      id: `call_${agent.index}_${step}_${c}`,
      name: tool.name,
      input: { arg_0: Math.floor(agent.rand() * 100), arg_1: prose(agent.rand, 40) },
      output: prose(agent.rand, 400 + Math.floor(agent.rand() * 3600)),
    }
  })
}

const started = performance.now()
const world = await buildWorld()
const harnesses = {
  anthropic: { promptloom: harness('promptloom'), naive: harness('naive') },
  openai: { promptloom: harness('promptloom'), naive: harness('naive') },
}
const all = [harnesses.anthropic.promptloom, harnesses.anthropic.naive, harnesses.openai.promptloom, harnesses.openai.naive]
const agentMs = STEP_MS / world.agents.length

for (let step = 1; step <= STEPS; step++) {
  for (const preset of world.presets) {
    if (step === preset.load) preset.fiber = await preset.scope.ctx.plugin(preset.plugin)
    if (step === preset.unload) await preset.fiber!.dispose()
  }
  world.contextTurn.value = String(step)
  for (const agent of world.agents) {
    if (step > 1 && step % 10 === agent.index % 10) agent.notes.value = `Progress note at step ${step}: ${prose(agent.rand, 380)}`
    const assembly = await world.sp.assemble({ scope: agent.key })
    const rendered = render(assembly)
    const snapshot = renderContextSnapshot(assembly)

    const request = toAnthropic({ assembly, rendered, messages: agent.anthropic, snapshot })
    send(harnesses.anthropic.promptloom, '/v1/messages', { model: ANTHROPIC_MODEL, max_tokens: 1024, ...request }, true)
    const sent = historyOf(request)
    const naive = {
      model: ANTHROPIC_MODEL,
      max_tokens: 1024,
      system: [{ type: 'text', text: rendered.text, cache_control: { type: 'ephemeral' } }],
      tools: request.tools.map(({ cache_control: _, ...tool }) => tool),
      messages: sent,
    }
    send(harnesses.anthropic.naive, '/v1/messages', naive, true)

    const chat = toOpenAIChat({ assembly, rendered, messages: agent.openai, snapshot, promptCacheKey: true })
    send(harnesses.openai.promptloom, '/v1/chat/completions', { model: OPENAI_MODEL, ...chat }, false)
    const { prompt_cache_key: _, ...unkeyed } = chat
    send(harnesses.openai.naive, '/v1/chat/completions', { model: OPENAI_MODEL, ...unkeyed }, false)

    const calls = toolCalls(agent, assembly, step)
    agent.anthropic = [
      ...sent,
      { role: 'assistant', content: calls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.input })) },
      { role: 'user', content: calls.map((call) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: call.output })) },
    ]
    agent.openai = [
      ...historyOf(chat),
      { role: 'assistant', content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.input) } })) },
      ...calls.map((call) => ({ role: 'tool' as const, tool_call_id: call.id, content: call.output })),
    ]
    for (const h of all) h.sim.advance(agentMs)
  }
}

const pct = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)} %`
const millions = (tokens: number): string => `${(tokens / 1e6).toFixed(2)} M`
const rows: string[] = [
  '| provider | harness | input tokens | cached (read) | written | cached share | cost (uncached-token units) | cost vs naive | target |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
]
let pass = true
for (const [provider, pair] of Object.entries(harnesses)) {
  for (const h of [pair.promptloom, pair.naive]) {
    const t = h.totals
    const share = t.cached / t.input
    const ratio = t.cost / pair.naive.totals.cost
    let target = ''
    if (h === pair.promptloom) {
      const shareOk = share >= 0.9
      const costOk = provider !== 'anthropic' || ratio <= 0.5
      pass &&= shareOk && costOk
      target = provider === 'anthropic' ? `share ≥ 90 % ${shareOk ? '✓' : '✗'}, cost ≤ 0.5× ${costOk ? '✓' : '✗'}` : `share ≥ 90 % ${shareOk ? '✓' : '✗'}`
    }
    const written = provider === 'anthropic' ? millions(t.write5m + t.write1h) : '—'
    rows.push(`| ${provider} | ${h.name} | ${millions(t.input)} | ${millions(t.cached)} | ${written} | ${pct(t.cached, t.input)} | ${millions(t.cost)} | ${ratio.toFixed(2)}× | ${target} |`)
  }
}
console.log(rows.join('\n'))
console.log()
console.log('| provider | harness | tools cached | system cached | history cached | history share of input |')
console.log('| --- | --- | ---: | ---: | ---: | ---: |')
for (const [provider, pair] of Object.entries(harnesses)) {
  for (const h of [pair.promptloom, pair.naive]) {
    const s = h.bySection
    console.log(`| ${provider} | ${h.name} | ${pct(s.cachedTools, s.tools)} | ${pct(s.cachedSystem, s.system)} | ${pct(s.cachedMessages, s.messages)} | ${pct(s.messages, h.totals.input)} |`)
  }
}
console.log()
console.log(
  `${world.agents.length} agents × ${STEPS} steps = ${harnesses.anthropic.promptloom.totals.requests} requests per harness and provider, ` +
    `simulated by examples/simulator (${ANTHROPIC_MODEL}, ${OPENAI_MODEL}); ${((performance.now() - started) / 1000).toFixed(1)} s`,
)
if (!pass) process.exitCode = 1
