/**
 * Tool ordering across providers.
 *
 * Global and scoped tool providers all contribute. With `toolOrder`, listed
 * names take their positions and every other tool goes, sorted, where
 * `TOOL_ORDER_REST` stands; without it, tools are sorted. `knownNames` lets a
 * provider hide a tool in one assembly without `toolOrder` calling it
 * unregistered; a `toolOrder` name that no provider of an assembly knows
 * fails that assembly, and so does one tool name supplied twice.
 *
 *   npx tsx examples/tool-ordering.ts
 */
import { Context } from 'cordis'
import { createScope, SystemPrompt, TOOL_ORDER_REST, type Scope, type ToolSchema } from '../src/index.js'

const tool = (name: string): ToolSchema => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: 'object', properties: {} },
})

const app = new Context()
await app.plugin(SystemPrompt, { toolOrder: ['read', TOOL_ORDER_REST, 'bash'] })
const prompt = app.systemPrompt

// Global provider: knows bash, but hides it from read-only agents.
const readOnly = { name: 'read-only-agent' }
prompt.tools((context) => ({
  schemas: context.scope === readOnly ? [tool('read'), tool('grep')] : [tool('read'), tool('grep'), tool('bash')],
  knownNames: ['read', 'grep', 'bash'],
}))

const coder = { name: 'coder-agent' }
let scopes!: Record<'coder' | 'readOnly', Scope>
await app.inject(['systemPrompt'], (ctx) => {
  scopes = { coder: createScope(ctx, coder), readOnly: createScope(ctx, readOnly) }
})
// Scoped provider: only the coder gets three more tools, none listed in toolOrder.
scopes.coder.ctx.systemPrompt.tools(() => ({ schemas: [tool('web_fetch'), tool('edit'), tool('apply_patch')] }))

const names = async (key: object): Promise<string> =>
  (await prompt.assemble({ scope: key })).tools.map((t) => t.name).join(', ')
console.log(`toolOrder: read, ${TOOL_ORDER_REST}, bash`)
console.log(`${coder.name}: ${await names(coder)}`)
console.log(`${readOnly.name}: ${await names(readOnly)}`)

// The same tool name from two providers is rejected.
const dispose = scopes.coder.ctx.systemPrompt.tools(() => ({ schemas: [tool('read')] }))
await prompt.assemble({ scope: coder }).catch((error: Error) => console.log(`duplicate: ${error.message}`))
await dispose()

// A toolOrder entry no provider knows is a configuration error, reported at assembly.
const strict = new Context()
await strict.plugin(SystemPrompt, { toolOrder: ['deploy', TOOL_ORDER_REST] })
strict.systemPrompt.tools(() => ({ schemas: [tool('read')] }))
await strict.systemPrompt.assemble().catch((error: Error) => console.log(`unregistered: ${error.message}`))
