// The same agent loop on OpenAI Chat Completions: promptloom builds the
// messages (system message, history, snapshot) and tools each step; OpenAI
// caches the longest common prefix by itself, so keeping it identical is the
// whole job. The "model" is the local provider cache simulator (examples/simulator/):
// a simulation that applies OpenAI's documented caching rules, not OpenAI.
import { Context } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import OpenAI from 'openai'
import { createStepSurface, historyOf, SystemPrompt, toOpenAIChat, usageFromOpenAI, type RenderedPrompt } from '../src/index.js'
import { printBody, scriptedModel, startSimulator, trimmed } from './simulator/index.js'

const server = await startSimulator({ reply: scriptedModel })
const client = new OpenAI({ apiKey: 'dummy', baseURL: `${server.url}/v1`, maxRetries: 0 })

const app = new Context()
await app.plugin(SystemPrompt, { identity: 'You are Loom, a coding agent.' })
const prompt = app.systemPrompt
prompt.section({ name: 'policy', order: 500, text: 'Run the tests before you commit.', stability: 'static', cacheBreakpoint: true })
prompt.tools(() => ({ schemas: [{ name: 'read', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } }] }))
let gitStatus = 'clean'
prompt.context({ name: 'git', order: 100, text: () => `git status: ${gitStatus}` })

// A plugin that loads mid-session: a new tool and a section about it.
const grepPlugin = {
  name: 'grep',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    ctx.systemPrompt.section({ name: 'grep', order: 1500, text: 'Search with grep before reading whole files.' })
    ctx.systemPrompt.tools(() => ({ schemas: [{ name: 'grep', description: 'Search files.', parameters: { type: 'object', properties: { pattern: { type: 'string' } } } }] }))
  },
}

const surface = createStepSurface({ systemPromptUpdate: 'in-history', countTokens })
let history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'The login test fails. Fix it.' }]
let system: RenderedPrompt | undefined // node 0: the system message the cache was built on

for (let step = 1; step <= 5; step++) {
  if (step === 3) await app.plugin(grepPlugin)
  if (step === 4) gitStatus = '1 file modified'
  const assembly = await prompt.assemble()
  const result = surface.step({ assembly, config: { model: 'gpt-5' }, historyLength: history.length + 1 }) // + the system message

  // #region openai-request
  // Surface events become history: node 0 is the system message; an in-history update is a later one.
  for (const event of result.events) {
    if (event.type === 'system/message' && event.node === 0) system = result.rendered
    if (event.type === 'system/message' && event.node > 0) history.push({ role: 'system', content: event.text })
  }
  const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
  const request = toOpenAIChat({ assembly, rendered: system, messages: history, snapshot })
  const completion = await client.chat.completions.create({ model: 'gpt-5', ...request })
  const reply = completion.choices[0]!.message
  history = [...historyOf(request), reply] // keeps the snapshot, not the leading system message
  const usage = surface.observeUsage(usageFromOpenAI(completion.usage!))
  // #endregion openai-request

  for (const call of reply.tool_calls ?? []) {
    if (call.type === 'function') history.push({ role: 'tool', tool_call_id: call.id, content: `(output of ${call.function.name})` })
  }
  if (reply.tool_calls === undefined) history.push({ role: 'user', content: 'Thanks. Now run the tests.' })
  const calls = (reply.tool_calls ?? []).map((call) => (call.type === 'function' ? `→ ${call.function.name}` : '→ custom'))
  const changes = [result.toolsChanged && 'tools changed', result.changedSections.length > 0 && step > 1 && `changed ${result.changedSections.join(', ')}`]
  console.log(
    `step ${step}  predicted reusable ${String(result.reusablePrefixTokens).padStart(3)} of ${String(result.promptTokens).padStart(3)} system tokens` +
      `  observed cached ${String(usage.cachedInputTokens).padStart(4)} of ${String(usage.inputTokens).padStart(4)} input tokens` +
      `  ${calls.join(' ') || '→ text'}  ${changes.filter(Boolean).join('; ')}`.trimEnd(),
  )
}

printBody('recorded OpenAI body (step 4)', trimmed(server.requests[3]!.body))
await server.close()
