/**
 * A waterfall listener that rewrites the presentation of one agent.
 *
 * `system-prompt/assemble` listeners are scope-filtered: one registered
 * through an agent's scope context hears only that agent's assemblies (and
 * its descendants'), while an unscoped listener hears every assembly. The
 * listener's result is authoritative for sections, contexts and variables;
 * tools stay provider-owned. Each assembly hands listeners a fresh copy, so a
 * rewrite never leaks into the registry or into later assemblies.
 *
 *   npx tsx examples/waterfall-listener.ts
 */
import { Context } from 'cordis'
import { createScope, renderContextSnapshot, renderPrompt, SystemPrompt, type Scope } from '../src/index.js'

const app = new Context()
await app.plugin(SystemPrompt, { identity: 'You are an AI agent.' })
app.systemPrompt.section({ name: 'style', order: 100, text: 'Answer in English.' })

const agent = { name: 'agent-fr' }
let scope!: Scope
await app.inject(['systemPrompt'], (ctx) => {
  scope = createScope(ctx, agent)
})

// Scoped listener: rewrites one section and adds a runtime context, then hands on.
scope.ctx.on('system-prompt/assemble', async (presentation, context, next) => {
  for (const section of presentation.sections) {
    if (section.name === 'style') section.text = 'Answer in French.'
  }
  presentation.contexts.push({ name: 'locale', text: 'User locale: fr-FR.' })
  return next()
})
// Unscoped listener: hears every assembly, here only to log it.
app.on('system-prompt/assemble', async (presentation, context, next) => {
  console.log(`listener heard an assembly for ${context.scope === undefined ? 'the global view' : (context.scope as { name: string }).name}`)
  return next()
})

const global = await app.systemPrompt.assemble()
const scoped = await app.systemPrompt.assemble({ scope: agent })
console.log(`global prompt: ${renderPrompt(global).replace(/\n\n/g, ' | ')}`)
console.log(`${agent.name} prompt: ${renderPrompt(scoped).replace(/\n\n/g, ' | ')}`)
console.log(`${agent.name} context: ${renderContextSnapshot(scoped).split('\n\n').slice(1).join(' | ')}`)

// The registry is untouched: the section still reads as registered.
const again = await app.systemPrompt.assemble()
console.log(`registry section text: ${again.sections.find((s) => s.name === 'style')!.text}`)
