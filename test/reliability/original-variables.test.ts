import { describe, expect, test, vi } from 'vitest'
import { renderPrompt } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'

// A variable that a variable provider registers while the variables are read
// is part of that same assembly, as the original harness's live iteration of
// its registry shows it (not one assembly late).

describe('a variable registered by a variable provider during evaluation', () => {
  test('is in the same assembly', async () => {
    const app = await mount(BARE)
    let registered = false
    app.systemPrompt.variable('first', () => {
      if (!registered) {
        registered = true
        app.systemPrompt.variable('late', () => 'L')
      }
      return '1'
    })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.variables).toEqual({ first: '1', late: 'L' })
  })

  test('renders in the section of that same assembly', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'intro', order: 0, text: '{{first}} {{late}}' })
    let registered = false
    app.systemPrompt.variable('first', () => {
      if (!registered) {
        registered = true
        app.systemPrompt.variable('late', () => 'L')
      }
      return '1'
    })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('1 L')
  })

  test('is read once, and every earlier provider is not read again', async () => {
    const app = await mount(BARE)
    const late = vi.fn(() => 'L')
    const first = vi.fn(() => {
      if (first.mock.calls.length === 1) app.systemPrompt.variable('late', late)
      return '1'
    })
    app.systemPrompt.variable('first', first)
    await app.systemPrompt.prepare()
    expect([first.mock.calls.length, late.mock.calls.length]).toEqual([1, 1])
  })

  test('a chain of such registrations is read to its end in the same preparation', async () => {
    const app = await mount(BARE)
    const once = (name: string, next?: () => void) => {
      let done = false
      return () => {
        if (!done) {
          done = true
          next?.()
        }
        return name
      }
    }
    app.systemPrompt.variable(
      'a',
      once('A', () => app.systemPrompt.variable('b', once('B', () => app.systemPrompt.variable('c', () => 'C')))),
    )
    expect((await app.systemPrompt.prepare()).variables).toEqual({ a: 'A', b: 'B', c: 'C' })
  })

  test('a scoped one is in the same assembly of its scope', async () => {
    const app = await mount(BARE)
    const agent = { name: 'agent' }
    const scope = await mintScope(app, agent)
    app.systemPrompt.variable('mode', () => 'global')
    let registered = false
    scope.ctx.systemPrompt.variable('first', () => {
      if (!registered) {
        registered = true
        scope.ctx.systemPrompt.variable('extra', () => 'E')
      }
      return '1'
    })
    const assembly = await app.systemPrompt.assemble({ scope: agent })
    expect(assembly.variables).toEqual({ mode: 'global', first: '1', extra: 'E' })
  })

  test('a scoped one that shadows a global variable already read gives its own value in the same assembly', async () => {
    const app = await mount(BARE)
    const agent = { name: 'agent' }
    const scope = await mintScope(app, agent)
    app.systemPrompt.variable('mode', () => 'global')
    let registered = false
    scope.ctx.systemPrompt.variable('first', () => {
      if (!registered) {
        registered = true
        scope.ctx.systemPrompt.variable('mode', () => 'scoped')
      }
      return '1'
    })
    const assembly = await app.systemPrompt.assemble({ scope: agent })
    expect(assembly.variables).toEqual({ mode: 'scoped', first: '1' })
  })
})
