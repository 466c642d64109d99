import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { bindScopeParent } from '../../src/index.js'
import { BARE, family, mintScope, mount, names, ownSections } from './system-prompt.fixtures.js'

// A view's facts are computeds over parent links, scope layers and entry
// tables (view.ts). These pin the writers each fact must hear: a fact that
// missed one would answer with the fact as it was before the write.
describe('the view memo of derived facts', () => {
  test('inspect sees a scope layer appear with its first registration and vanish with its last', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'g', order: 1, text: 'G' })
    // Inspected before the agent has a layer: its layers are the global one and the preset's (none yet).
    expect(names(app.systemPrompt.inspect(keys.agent).sections).filter((name) => !name.startsWith('deployment:'))).toEqual(['g'])
    const dispose = scopes.agent.ctx.systemPrompt.section({ name: 'own', order: 2, text: 'Own' })
    expect(app.systemPrompt.inspect(keys.agent).sections.filter((entry) => !entry.name.startsWith('deployment:')).map((entry) => [entry.name, entry.layer])).toEqual([
      ['g', 'global'],
      ['own', keys.agent],
    ])
    await dispose()
    expect(names(app.systemPrompt.inspect(keys.agent).sections).filter((name) => !name.startsWith('deployment:'))).toEqual(['g'])
  })

  test('a per-step signal in a section text leaves every fact answered, and the text still changes', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const turn = signal('1')
    app.systemPrompt.section({ name: 'turn', order: 1, text: turn })
    app.systemPrompt.context({ name: 'cwd', order: 1, text: '/w' })
    const first = await app.systemPrompt.assemble({ scope: keys.agent })
    turn.value = '2'
    const second = await app.systemPrompt.assemble({ scope: keys.agent })
    expect(ownSections(first).map((section) => section.text)).toEqual(['1'])
    expect(ownSections(second).map((section) => section.text)).toEqual(['2'])
    expect(second.contexts.map((context) => context.text)).toEqual(['/w'])
  })

  test('a registration of one kind leaves the other kinds answered and shows up in its own', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 's', order: 1, text: 'S {{v}}' })
    app.systemPrompt.variable('v', 'one')
    await app.systemPrompt.assemble({ scope: keys.agent })
    for (const [register, check] of [
      [() => scopes.agent.ctx.systemPrompt.context({ name: 'c', order: 1, text: 'C' }), async () => names((await app.systemPrompt.assemble({ scope: keys.agent })).contexts)],
      [() => scopes.preset.ctx.systemPrompt.variable('v', 'two'), async () => (await app.systemPrompt.assemble({ scope: keys.agent })).variables.v],
      [() => scopes.agent.ctx.systemPrompt.section({ name: 't', order: 2, text: 'T' }), async () => names(ownSections(await app.systemPrompt.assemble({ scope: keys.agent })))],
    ] as const) {
      const before = await check()
      const dispose = register()
      const during = await check()
      await dispose()
      expect(await check()).toEqual(before)
      expect(during).not.toEqual(before)
    }
  })

  test('a parent link rebound after a fact was answered re-derives the chain', async () => {
    const app = await mount(BARE)
    const left = { name: 'left' }
    const right = { name: 'right' }
    const agent = { name: 'agent' }
    const lefts = await mintScope(app, left)
    const rights = await mintScope(app, right)
    lefts.ctx.systemPrompt.section({ name: 'side', order: 1, text: 'left' })
    rights.ctx.systemPrompt.section({ name: 'side', order: 1, text: 'right' })
    const binding = bindScopeParent(agent, left)
    expect(ownSections(await app.systemPrompt.assemble({ scope: agent })).map((section) => section.text)).toEqual(['left'])
    binding.rebind(right)
    expect(ownSections(await app.systemPrompt.assemble({ scope: agent })).map((section) => section.text)).toEqual(['right'])
    binding.rebind(undefined)
    expect(ownSections(await app.systemPrompt.assemble({ scope: agent }))).toEqual([])
  })
})
