import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createScope, SystemPrompt } from '../../src/index.js'

// A scope's context reaches services only through the plugin that minted it.
// Minted on the root context, it reaches none: reading one fails in Cordis,
// and the error then says why and how to mint the scope instead.

async function mount(): Promise<Context> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  return app
}

function messageOf(read: () => unknown): string {
  try {
    read()
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('expected the read to throw')
}

describe('a service read through a scope context that cannot reach it', () => {
  test('minted on the root context: names the scope, the root and the app.inject remedy', async () => {
    const app = await mount()
    const scope = createScope(app, { name: 'agent-1' })
    const message = messageOf(() => scope.ctx.systemPrompt)
    expect(message).toBe(
      'cannot get property "systemPrompt" without inject: scope "agent-1" was minted on the root context, which injects nothing, ' +
        "and a scope's context reaches only the services injected where it was minted; " +
        "mint it inside app.inject(['systemPrompt'], (ctx) => createScope(ctx, key)), or in a plugin declaring inject: ['systemPrompt']",
    )
  })

  test("minted in a plugin that does not inject the service: Cordis' own message, which names the fix there", async () => {
    const app = await mount()
    createScope(app, { name: 'agent-1' })
    let message = ''
    await app.plugin({
      name: 'harness',
      apply(ctx: Context) {
        message = messageOf(() => createScope(ctx, { name: 'agent-2' }).ctx.systemPrompt)
      },
    })
    expect(message).toBe('cannot get property "systemPrompt" without inject')
  })

  test('a context derived from the scope context gets the same explanation', async () => {
    const app = await mount()
    const scope = createScope(app, { name: 'agent-1' })
    expect(messageOf(() => scope.ctx.extend({}).systemPrompt)).toMatch(/^cannot get property "systemPrompt" without inject: scope "agent-1" was minted on the root context/)
  })

  test('minted inside app.inject, the same read works', async () => {
    const app = await mount()
    const agent = { name: 'agent-1' }
    await app.inject(['systemPrompt'], (ctx) => {
      createScope(ctx, agent).ctx.systemPrompt.section({ name: 'task', order: 1, text: 'Fix the login test.' })
    })
    expect(app.systemPrompt.inspect(agent).sections.map((section) => section.name)).toContain('task')
  })

  test("a plugin loaded under the scope that lacks the inject keeps Cordis' own message (the scope is not at fault)", async () => {
    const app = await mount()
    const scope = createScope(app, { name: 'agent-1' })
    let message = ''
    await scope.ctx.plugin((ctx: Context) => {
      message = messageOf(() => ctx.systemPrompt)
    })
    expect(message).toBe('cannot get property "systemPrompt" without inject')
  })

  test('an unscoped plugin context keeps Cordis\' own message', async () => {
    const app = await mount()
    createScope(app, { name: 'agent-1' })
    let message = ''
    await app.plugin((ctx: Context) => {
      message = messageOf(() => ctx.systemPrompt)
    })
    expect(message).toBe('cannot get property "systemPrompt" without inject')
  })

  test('the explanation is one listener per app, however many scopes are minted', async () => {
    const app = await mount()
    const listeners = (): number => ((app.events as unknown as { _hooks: Record<string, unknown[]> })._hooks['internal/get'] ?? []).length
    const before = listeners()
    for (let i = 0; i < 5; i++) createScope(app, { name: `agent-${i}` })
    expect(listeners() - before).toBe(1)
  })
})
