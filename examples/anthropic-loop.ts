// An agent loop on the Anthropic Messages API: promptloom builds system, tools
// and messages each step; the step surface says what changed and how much of
// the prompt a cache can reuse; the observed usage is logged beside it.
// The "model" is the local provider cache simulator (examples/simulator/): a
// simulation that applies Anthropic's documented caching rules, not Anthropic.
import Anthropic from '@anthropic-ai/sdk'
import { Context } from 'cordis'
import { countTokens } from 'gpt-tokenizer'
import { createStepSurface, historyOf, SystemPrompt, toAnthropic, usageFromAnthropic, type RenderedPrompt } from '../src/index.js'
import { createSessionLogWriter } from '../src/node.js'
import { printBody, scriptedModel, startSimulator, trimmed } from './simulator/index.js'

const server = await startSimulator({ reply: scriptedModel })
const client = new Anthropic({ apiKey: 'dummy', baseURL: server.url, maxRetries: 0 })

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
const log = process.argv[2] === undefined ? undefined : createSessionLogWriter(process.argv[2], { truncate: true })
let history: Anthropic.MessageParam[] = [{ role: 'user', content: 'The login test fails. Fix it.' }]
let system: RenderedPrompt | undefined // node 0: the system prompt the cache was built on

for (let step = 1; step <= 5; step++) {
  if (step === 3) await app.plugin(grepPlugin)
  if (step === 4) gitStatus = '1 file modified'
  const assembly = await prompt.assemble()
  const result = surface.step({ assembly, config: { model: 'claude-sonnet-4-6' }, historyLength: history.length + 1 }) // + node 0, the system prompt
  log?.write(result)

  // #region anthropic-request
  // Surface events become history: node 0 is `system`; an in-history update is a message.
  for (const event of result.events) {
    if (event.type === 'system/message' && event.node === 0) system = result.rendered
    if (event.type === 'system/message' && event.node > 0) {
      history.push({ role: 'user', content: `Updated system prompt (supersedes the earlier one):\n\n${event.text}` })
    }
  }
  const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
  const request = toAnthropic({ assembly, rendered: system, messages: history, snapshot })
  const reply = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, ...request })
  history = [...historyOf(request), { role: 'assistant', content: reply.content }] // keeps the snapshot, not promptloom's cache marker
  const usage = surface.observeUsage(usageFromAnthropic(reply.usage))
  // #endregion anthropic-request
  log?.writeUsage(usage)

  const calls = reply.content.filter((block) => block.type === 'tool_use')
  if (calls.length > 0) {
    history.push({ role: 'user', content: calls.map((call) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: `(output of ${call.name})` })) })
  } else {
    history.push({ role: 'user', content: 'Thanks. Now run the tests.' })
  }
  const changes = [result.toolsChanged && 'tools changed', result.changedSections.length > 0 && step > 1 && `changed ${result.changedSections.join(', ')}`]
  console.log(
    `step ${step}  predicted reusable ${String(result.reusablePrefixTokens).padStart(3)} of ${String(result.promptTokens).padStart(3)} system tokens` +
      `  observed cached ${String(usage.cachedInputTokens).padStart(4)} of ${String(usage.inputTokens).padStart(4)} input tokens` +
      `  ${calls.map((call) => `→ ${call.name}`).join(' ') || '→ text'}  ${changes.filter(Boolean).join('; ')}`.trimEnd(),
  )
}

printBody('recorded Anthropic body (step 4)', trimmed(server.requests[3]!.body))
await server.close()
