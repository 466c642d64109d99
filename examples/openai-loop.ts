// The same agent loop on OpenAI Chat Completions: the registry nobody annotated, the plugin that loads
// mid-session, promptloom building the messages (system message, history, snapshot) and tools each
// step. OpenAI caches the longest common prefix by itself, from 1024 tokens in 128-token steps, so
// keeping the prefix byte-identical is most of the job; `promptCacheKey: true` adds a
// `prompt_cache_key` derived from the tools and the stable system prompt, so agents that share them
// are routed to the same cache. The "provider" is the local cache simulator (examples/simulator/): a
// simulation that applies OpenAI's documented caching rules, not OpenAI.
//
//   npx tsx examples/openai-loop.ts
import { Context } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import OpenAI from 'openai'
import { cacheRules, createStepSurface, historyOf, SystemPrompt, toOpenAIChat, usageFromOpenAI } from '../src/index.js'
import { files, IDENTITY, policies, repository, runtimeContext, runTool, search, shell, TASK } from './coding-agent.js'
import { printCacheTable, type CacheRow } from './loop-table.js'
import { printBody, scriptedModel, startSimulator, trimmed } from './simulator/index.js'

const MODEL = 'gpt-5'
const server = await startSimulator({ reply: scriptedModel })
const client = new OpenAI({ apiKey: 'unused', baseURL: server.baseURL('openai'), maxRetries: 0 })

const app = new Context()
await app.plugin(SystemPrompt, { identity: IDENTITY })
for (const plugin of [policies, repository, files, shell, runtimeContext]) await app.plugin(plugin)
const prompt = app.systemPrompt

// The same tokenizer as the simulator (gpt-tokenizer's o200k_base), so expected and observed counts compare.
const surface = createStepSurface({ countTokens, cacheRules: cacheRules.openai({ model: MODEL }) })
let history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: TASK }]
const rows: CacheRow[] = []

for (let step = 1; step <= 10; step++) {
  if (step === 4) await app.plugin(search) // code search loads mid-session: a new tool and a section
  const assembly = await prompt.assemble()
  const result = surface.step({ assembly, config: { model: MODEL } })

  // #region openai-request
  const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
  const request = toOpenAIChat({ assembly, rendered: result.rendered, messages: history, snapshot, promptCacheKey: true })
  const completion = await client.chat.completions.create({ model: MODEL, ...request })
  const reply = completion.choices[0]!.message
  history = [...historyOf(request), reply] // as sent, without the leading system message
  const usage = surface.observeUsage(usageFromOpenAI(completion.usage!))
  // #endregion openai-request

  const calls = (reply.tool_calls ?? []).filter((call) => call.type === 'function')
  rows.push({ step, reply: calls.map((call) => `→ ${call.function.name}`).join(' ') || '→ text', result, usage, simulated: server.requests.at(-1)! })
  if (calls.length === 0) break
  for (const call of calls) history.push({ role: 'tool', tool_call_id: call.id, content: runTool(call.function.name, JSON.parse(call.function.arguments) as Record<string, unknown>) })
}

printCacheTable(
  `cache per step, ${MODEL} (observed: simulated by examples/simulator with OpenAI's documented rules)`,
  rows,
  'the conversation the request shares with the previous one, all rounded down to 128-token steps',
)
printBody(`recorded OpenAI body (step ${rows.length})`, trimmed(server.requests.at(-1)!.body))
await server.close()
