import type { Message } from 'cordis'
import { describe, expect, test } from 'vitest'
import { BARE, mount, ownSections } from '../assembly/system-prompt.fixtures.js'

// Where promptloom keeps its own behaviour on purpose: a `system-prompt/change`
// listener that throws does not roll the registration back and its error does
// not reach the caller (the original harness does both). The event comes from
// a signal effect, once per batch, also for a signal write that has no
// registering caller; the error is logged as a warning of 'system-prompt'.

async function mountLogged() {
  const app = await mount(BARE)
  const warnings: Message[] = []
  await app.logger.exporter({ export: (message) => void (message.type === 'warn' && warnings.push(message)) })
  return { app, warnings }
}

describe('a system-prompt/change listener that throws', () => {
  const failure = new Error('listener failed')

  test('keeps the registration: it is assembled, and the caller gets its disposer', async () => {
    const { app } = await mountLogged()
    app.on('system-prompt/change', () => {
      throw failure
    })
    const dispose = app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello' })
    expect(typeof dispose).toBe('function')
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([{ name: 'intro', order: 0, text: 'Hello' }])
  })

  test('logs its error as a warning of "system-prompt", once per change', async () => {
    const { app, warnings } = await mountLogged()
    app.on('system-prompt/change', () => {
      throw failure
    })
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello' })
    expect(warnings.map((message) => [message.name, message.args[0]])).toEqual([['system-prompt', failure]])
  })

  test('the registration it failed on is disposed normally afterwards', async () => {
    const { app } = await mountLogged()
    let fail = true
    app.on('system-prompt/change', () => {
      if (fail) throw failure
    })
    const dispose = app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello' })
    fail = false
    await dispose()
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([])
  })
})
