import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createScope, renderPrompt, SystemPrompt } from '../../src/index.js'

async function mount(): Promise<{ app: Context; ctx: Context }> {
  const app = new Context()
  await app.plugin(SystemPrompt)
  let ctx!: Context
  await app.inject(['systemPrompt'], (injected) => {
    ctx = injected
  })
  ctx.systemPrompt.section({ name: 'intro', order: 1, text: 'Hello.' })
  return { app, ctx }
}

describe('per-scope memo release', () => {
  test('a disposed scope’s view is dropped even while its key is still referenced', async () => {
    const { app, ctx } = await mount()
    const agent = { name: 'agent' }
    const scope = createScope(ctx, agent)
    renderPrompt(await app.systemPrompt.assemble({ scope: agent }))
    await scope.dispose()
    const before = app.systemPrompt.stats()
    const assembly = await app.systemPrompt.assemble({ scope: agent })
    renderPrompt(assembly)
    const after = app.systemPrompt.stats()
    // A fresh view renders cold (the scope had no layer of its own, so nothing
    // else would have invalidated the old view's memo); having no entries of
    // its own, it shares the global view's plans and merges nothing.
    expect(after.sectionRenders - before.sectionRenders).toBe(assembly.sections.length)
    expect(after.renderCacheHits - before.renderCacheHits).toBe(0)
    expect(after.structureRecomputes - before.structureRecomputes).toBe(0)
  })

  test('a live scope keeps its view', async () => {
    const { app, ctx } = await mount()
    const agent = { name: 'agent' }
    createScope(ctx, agent)
    renderPrompt(await app.systemPrompt.assemble({ scope: agent }))
    const before = app.systemPrompt.stats()
    renderPrompt(await app.systemPrompt.assemble({ scope: agent }))
    const after = app.systemPrompt.stats()
    expect(after.structureRecomputes - before.structureRecomputes).toBe(0)
    expect(after.sectionRenders - before.sectionRenders).toBe(0)
  })

  test('disposing another plugin’s fiber releases nothing', async () => {
    const { app, ctx } = await mount()
    const agent = { name: 'agent' }
    createScope(ctx, agent)
    renderPrompt(await app.systemPrompt.assemble({ scope: agent }))
    const other = app.plugin((c: Context) => void c)
    await other
    await other.dispose()
    const before = app.systemPrompt.stats()
    renderPrompt(await app.systemPrompt.assemble({ scope: agent }))
    expect(app.systemPrompt.stats().structureRecomputes - before.structureRecomputes).toBe(0)
  })
})
