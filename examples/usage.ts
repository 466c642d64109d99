import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { createScope, createStepSurface, renderContextSnapshot, renderPrompt, SECTION_ORDERS, SystemPrompt } from '../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../src/node.js'

const app = new Context()
await app.plugin(SystemPrompt, { personaPrefix: 'You work for {{team}}.' })
const prompt = app.systemPrompt

// Global registrations: a variable, a section, a runtime context, a tool provider.
prompt.variable('team', 'the platform team')
prompt.section({ name: 'plan', order: SECTION_ORDERS.PLAN_POLICY, text: 'Plan before you edit.' })
let step = 1
prompt.context({ name: 'clock', order: 200, text: () => `This is model step ${step}.` })
const read = { name: 'read', description: 'Read a file.', parameters: { type: 'object' } }
prompt.tools(() => ({ schemas: [read] })) // the same object each call: detached (cloned) once

// One agent scope, minted from a plugin that injects systemPrompt; its entries shadow globals.
const agent = { name: 'agent-1' }
await app.inject(['systemPrompt'], (ctx) => {
  const scope = createScope(ctx, agent)
  scope.ctx.systemPrompt.variable('cwd', '/work/agent-1')
  scope.ctx.systemPrompt.section({ name: 'workspace', order: SECTION_ORDERS.HARNESS_SOURCE, text: 'Work in {{cwd}}.' })
})

// The agent loop, before every model step.
const surface = createStepSurface()
const log = createSessionLogWriter(join(tmpdir(), `promptloom-${process.pid}.jsonl`), { truncate: true }) // one JSONL log per agent
for (; step <= 2; step++) {
  const assembly = await prompt.assemble({ scope: agent })
  const result = surface.step({ assembly })
  log.write(result)
  console.log(`--- step ${step}: tools ${assembly.tools.map((t) => t.name)}, stable prefix ${result.stablePrefixLength} chars`)
  console.log(`${renderPrompt(assembly)}\n\n${renderContextSnapshot(assembly)}`)
}
console.log(prompt.stats())
console.log(`replayed ${readSessionLog(log.path).steps.length} steps from the session log`)
