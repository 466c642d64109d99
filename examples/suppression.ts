/**
 * Runtime-context suppression with a required context.
 *
 * `suppressRuntimeContext()` registered through a scope removes every
 * optional runtime context from that scope's (and its descendants')
 * snapshots while it lives; a context registered with `required: true`
 * survives. Other scopes are unaffected, and disposing the suppressor brings
 * the optional contexts back.
 *
 *   npx tsx examples/suppression.ts
 */
import { Context } from 'cordis'
import { CONTEXT_ORDERS, createScope, renderContextSnapshot, SystemPrompt, type Scope } from '../src/index.js'

const app = new Context()
await app.plugin(SystemPrompt)
const prompt = app.systemPrompt
prompt.context({
  name: 'sandbox',
  order: CONTEXT_ORDERS.SANDBOX_POLICY,
  text: 'Commands run in a sandbox without network access.',
  required: true,
})
prompt.context({ name: 'git-status', order: 200, text: 'git status: 2 files modified.' })
prompt.context({ name: 'open-files', order: 210, text: 'Open files: src/index.ts' })

const quiet = { name: 'quiet-agent' }
const chatty = { name: 'chatty-agent' }
let scopes!: Scope[]
await app.inject(['systemPrompt'], (ctx) => {
  scopes = [createScope(ctx, quiet), createScope(ctx, chatty)]
})

const contexts = async (key: { name: string }): Promise<string> => {
  const snapshot = renderContextSnapshot(await prompt.assemble({ scope: key }))
  return snapshot.split('\n\n').slice(1).join(' | ')
}

const unsuppress = scopes[0]!.ctx.systemPrompt.suppressRuntimeContext()
console.log(`${quiet.name} (suppressed): ${await contexts(quiet)}`)
console.log(`${chatty.name}: ${await contexts(chatty)}`)

// prepare() applies the same rule: only required contexts while suppressed.
const prepared = await prompt.prepare({ scope: quiet })
console.log(`${quiet.name} prepare(): ${prepared.contexts.map((c) => c.name).join(', ')}`)

await unsuppress()
console.log(`${quiet.name} (suppressor disposed): ${await contexts(quiet)}`)
