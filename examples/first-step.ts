// The first agent step: a registry, an agent scope, and two real Anthropic
// calls; the second reads the system prompt from the provider's cache.
// @anthropic-ai/sdk reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL from the
// environment; with neither set, this file starts the local provider cache
// simulator (examples/simulator/, a simulation, not Anthropic) and points the
// SDK at it, so `npx tsx examples/first-step.ts` runs without a network.
import { startSimulator } from './simulator/index.js'

const simulator = process.env.ANTHROPIC_API_KEY === undefined && process.env.ANTHROPIC_BASE_URL === undefined ? await startSimulator() : undefined
if (simulator !== undefined) Object.assign(process.env, { ANTHROPIC_BASE_URL: simulator.baseURL('anthropic'), ANTHROPIC_API_KEY: 'simulated' })

// #region first-step
import Anthropic from '@anthropic-ai/sdk'
import { Context } from 'cordis'
import { createScope, createStepSurface, SystemPrompt, toAnthropic, usageFromAnthropic } from '../src/index.js'
const app = new Context()
await app.plugin(SystemPrompt) // the registry, a Cordis service
const agent = { name: 'agent-1' } // a scope key: what its scope registers, only this agent sees
const rules = 'Read a file before you edit it. Run the tests before you commit. Keep each change small and say why. '.repeat(100)
await app.inject(['systemPrompt'], (ctx) => createScope(ctx, agent).ctx.systemPrompt.section({ name: 'rules', order: 500, text: rules }))
const client = new Anthropic(), surface = createStepSurface() // the client reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
for (const content of ['Which test fails?', 'Fix it.']) {
  const assembly = await app.systemPrompt.assemble({ scope: agent })
  const reply = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, ...toAnthropic({ assembly, rendered: surface.step({ assembly }).rendered, messages: [{ role: 'user', content }] }) })
  const usage = surface.observeUsage(usageFromAnthropic(reply.usage)) // input tokens count the cached ones too
  console.log(`cached ${usage.cachedInputTokens} of ${usage.inputTokens} input tokens`)
}
// #endregion first-step

await simulator?.close()
