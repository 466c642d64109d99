/**
 * A per-agent persona that shadows the deployment persona.
 *
 * The deployment's `personaPrefix` is a global section
 * (`deployment:persona-prefix`). An agent scope that registers a section of
 * the same name shadows it in that agent's assemblies only; the shadowed text
 * is never read for that agent, and a sibling agent keeps the deployment one.
 *
 *   npx tsx examples/persona-shadowing.ts
 */
import { Context } from 'cordis'
import { createScope, PERSONA_PREFIX_SECTION, renderPrompt, SECTION_ORDERS, SystemPrompt, type Scope } from '../src/index.js'

const app = new Context()
await app.plugin(SystemPrompt, {
  identity: 'You are an AI agent.',
  personaPrefix: 'You are a general-purpose assistant for {{team}}.',
})
app.systemPrompt.variable('team', 'the platform team')

const builder = { name: 'builder' }
const reviewer = { name: 'reviewer' }
let scopes!: Record<'builder' | 'reviewer', Scope>
await app.inject(['systemPrompt'], (ctx) => {
  scopes = { builder: createScope(ctx, builder), reviewer: createScope(ctx, reviewer) }
})

// Only the reviewer brings its own persona; it may use the same variables.
const dispose = scopes.reviewer.ctx.systemPrompt.section({
  name: PERSONA_PREFIX_SECTION,
  order: SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX,
  text: 'You review pull requests for {{team}} and never push code yourself.',
})

for (const key of [builder, reviewer]) {
  const prompt = renderPrompt(await app.systemPrompt.assemble({ scope: key }))
  console.log(`${key.name}: ${prompt.split('\n\n').join(' | ')}`)
}

// inspect() tells where the effective entry comes from and what it hides.
const persona = app.systemPrompt.inspect(reviewer).sections.find((entry) => entry.name === PERSONA_PREFIX_SECTION)!
const layerName = (layer: unknown): string => (layer === 'global' ? 'global' : (layer as { name: string }).name)
console.log(`reviewer persona comes from ${layerName(persona.layer)} and shadows ${persona.shadows.map(layerName).join(', ')}`)

// Disposing the scoped section brings the deployment persona back.
await dispose()
const restored = renderPrompt(await app.systemPrompt.assemble({ scope: reviewer }))
console.log(`reviewer after dispose: ${restored.split('\n\n').join(' | ')}`)
