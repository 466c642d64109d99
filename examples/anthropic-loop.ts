// An agent loop on the Anthropic Messages API with a registry nobody annotated for caching: five
// plugins register sections and tools without `stability` or `cacheBreakpoint`, and a sixth loads
// mid-session. promptloom builds system, tools and messages each step, marks the cacheable prefix
// (the stable run and the end of the history), and the step surface predicts what the provider
// serves from its cache by Anthropic's rules. The "provider" is the local cache simulator
// (examples/simulator/): a simulation that applies Anthropic's documented caching rules, not Anthropic.
//
//   npx tsx examples/anthropic-loop.ts [session-log.jsonl]
import Anthropic from '@anthropic-ai/sdk'
import { Context } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import { cacheRules, createStepSurface, historyOf, SystemPrompt, toAnthropic, usageFromAnthropic } from '../src/index.js'
import { createSessionLogWriter } from '../src/node.js'
import { files, IDENTITY, policies, repository, runtimeContext, runTool, search, shell, TASK } from './coding-agent.js'
import { printCacheTable, type CacheRow } from './loop-table.js'
import { printBody, scriptedModel, startSimulator, trimmed } from './simulator/index.js'

const MODEL = 'claude-sonnet-4-6'
const server = await startSimulator({ reply: scriptedModel })
const client = new Anthropic({ apiKey: 'unused', baseURL: server.baseURL('anthropic'), maxRetries: 0 })

const app = new Context()
await app.plugin(SystemPrompt, { identity: IDENTITY })
for (const plugin of [policies, repository, files, shell, runtimeContext]) await app.plugin(plugin)
const prompt = app.systemPrompt

// The same tokenizer as the simulator (gpt-tokenizer's o200k_base), so expected and observed counts compare.
const surface = createStepSurface({ countTokens, cacheRules: cacheRules.anthropic({ model: MODEL }) })
const log = process.argv[2] === undefined ? undefined : createSessionLogWriter(process.argv[2], { truncate: true })
let history: Anthropic.MessageParam[] = [{ role: 'user', content: TASK }]
const rows: CacheRow[] = []

for (let step = 1; step <= 10; step++) {
  if (step === 4) await app.plugin(search) // code search loads mid-session: a new tool and a section
  const assembly = await prompt.assemble()
  const result = surface.step({ assembly, config: { model: MODEL } })
  log?.write(result)

  // #region anthropic-request
  const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
  const request = toAnthropic({ assembly, rendered: result.rendered, messages: history, snapshot })
  const reply = await client.messages.create({ model: MODEL, max_tokens: 1024, ...request })
  history = [...historyOf(request), { role: 'assistant', content: reply.content }] // as sent, without promptloom's cache markers
  const usage = surface.observeUsage(usageFromAnthropic(reply.usage))
  // #endregion anthropic-request
  log?.writeUsage(usage)

  const calls = reply.content.filter((block) => block.type === 'tool_use')
  rows.push({ step, reply: calls.map((call) => `→ ${call.name}`).join(' ') || '→ text', result, usage, simulated: server.requests.at(-1)! })
  if (calls.length === 0) break
  history.push({ role: 'user', content: calls.map((call) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: runTool(call.name, call.input as Record<string, unknown>) })) })
}

printCacheTable(`cache per step, ${MODEL} (observed: simulated by examples/simulator with Anthropic's documented rules)`, rows, "the conversation up to the previous step's history breakpoint")
printBody(`recorded Anthropic body (step ${rows.length})`, trimmed(server.requests.at(-1)!.body))
await server.close()
