import { describe, expect, test } from 'vitest'
import { bindScopeParent, effect, signal } from '../../src/index.js'
import { BARE, family, mount } from './system-prompt.fixtures.js'

// SPEC §1 Storage: a read inside an effect subscribes, a mutation notifies. Registering, disposing
// and binding a parent are mutations: an effect that makes them must not subscribe to what they write.
describe('registrations made inside a preact effect', () => {
  test('an effect that registers while a flag is on runs once per flag change, and its cleanup disposes', async () => {
    const app = await mount(BARE)
    const enabled = signal(true)
    const text = signal('Plan first.')
    let runs = 0
    const stop = effect(() => {
      runs++
      if (!enabled.value) return undefined
      const disposeSection = app.systemPrompt.section({ name: 'plan', order: 1, text })
      const disposeVariable = app.systemPrompt.variable('goal', text)
      return () => {
        disposeSection()
        disposeVariable()
      }
    })
    expect(runs).toBe(1)
    app.systemPrompt.section({ name: 'unrelated', order: 2, text: 'Other.' })
    text.value = 'Plan carefully.'
    expect(runs).toBe(1)
    expect((await app.systemPrompt.assemble()).sections.map((section) => section.text)).toContain('Plan carefully.')
    enabled.value = false
    expect(runs).toBe(2)
    expect((await app.systemPrompt.assemble()).sections.map((section) => section.name)).not.toContain('plan')
    stop()
  })

  test('an effect that only disposed a registration or bound a parent does not rerun on later registrations', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    const dispose = scopes.agent.ctx.systemPrompt.section({ name: 'old', order: 1, text: 'Old.' })
    let runs = 0
    const stop = effect(() => {
      runs++
      if (runs === 1) {
        dispose()
        bindScopeParent({ name: 'child' }, { name: 'parent' })
      }
    })
    scopes.agent.ctx.systemPrompt.section({ name: 'new', order: 1, text: 'New.' })
    app.systemPrompt.section({ name: 'global', order: 2, text: 'Global.' })
    bindScopeParent({ name: 'child-2' }, { name: 'parent' })
    expect(runs).toBe(1)
    stop()
  })
})
