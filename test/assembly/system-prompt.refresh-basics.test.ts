import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import { renderContextSnapshot } from '../../src/index.js'
import { BARE, family, mount, names, tool } from './system-prompt.fixtures.js'

describe('refreshContext', () => {
  async function accepted() {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const time = signal('10:00')
    app.systemPrompt.context({ name: 'time', order: 0, text: time })
    const gone = app.systemPrompt.context({ name: 'gone', order: 1, text: 'soon gone' })
    scopes.agent.ctx.systemPrompt.context({ name: 'cwd', order: 2, text: () => `/work/${time.value}` })
    app.on('system-prompt/prepare', async (preparation, _context, next) => {
      preparation.contexts.push({ name: 'added', text: 'by listener' })
      return next()
    })
    const assembly = await app.systemPrompt.assemble({ scope: keys.agent })
    return { app, keys, scopes, time, gone, assembly }
  }

  test('returns a new object and never mutates the input', async () => {
    const { app, keys, time, gone, assembly } = await accepted()
    const snapshot = structuredClone(assembly)
    const contexts = assembly.contexts
    time.value = '10:05'
    await gone()
    const refreshed = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    expect(refreshed).not.toBe(assembly)
    expect(refreshed.contexts).not.toBe(contexts)
    expect(assembly).toEqual(snapshot)
    expect(assembly.contexts).toBe(contexts)
  })

  test('re-reads live registrations, drops gone ones and keeps listener additions', async () => {
    const { app, keys, time, gone, assembly } = await accepted()
    time.value = '10:05'
    await gone()
    expect(app.systemPrompt.refreshContext(assembly, { scope: keys.agent }).contexts).toEqual([
      { name: 'time', text: '10:05', registered: true },
      { name: 'cwd', text: '/work/10:05', registered: true },
      { name: 'added', text: 'by listener' },
    ])
  })

  test('leaves sections, tools and variables untouched', async () => {
    const { app, keys, assembly } = await accepted()
    app.systemPrompt.section({ name: 'new', order: 0, text: 'N' })
    app.systemPrompt.variable('v', 'V')
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    const refreshed = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    expect(refreshed.sections).toBe(assembly.sections)
    expect(refreshed.tools).toBe(assembly.tools)
    expect(refreshed.variables).toBe(assembly.variables)
  })

  test('keeps the accepted order, not the registry order', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.context({ name: 'b', order: 1, text: 'B' })
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { ...result, contexts: [...result.contexts].reverse() }
    })
    const preparation = await app.systemPrompt.prepare()
    expect(names(app.systemPrompt.refreshContext(preparation).contexts)).toEqual(['b', 'a'])
  })

  test('re-reads a registered context even when a listener rewrote its accepted text', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'a', order: 0, text: 'registry' })
    app.on('system-prompt/prepare', async (preparation, _context, next) => {
      preparation.contexts[0]!.text = 'listener'
      return next()
    })
    const preparation = await app.systemPrompt.prepare()
    expect(app.systemPrompt.refreshContext(preparation).contexts).toEqual([{ name: 'a', text: 'registry', registered: true }])
  })

  test('a listener-added context is copied, not shared', async () => {
    const { app, keys, assembly } = await accepted()
    const refreshed = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    const added = (list: { name: string }[]) => list.find((c) => c.name === 'added')
    expect(added(refreshed.contexts)).toEqual(added(assembly.contexts))
    expect(added(refreshed.contexts)).not.toBe(added(assembly.contexts))
  })

  test('a registration that is now shadowed is re-read from its nearest provider', async () => {
    const { app, keys, scopes, assembly } = await accepted()
    scopes.agent.ctx.systemPrompt.context({ name: 'time', order: 0, text: 'agent time' })
    expect(app.systemPrompt.refreshContext(assembly, { scope: keys.agent }).contexts[0]).toEqual({
      name: 'time',
      text: 'agent time',
      registered: true,
    })
  })

  test('current suppression removes every optional context, listener-added ones included', async () => {
    const { app, keys, scopes, assembly } = await accepted()
    scopes.preset.ctx.systemPrompt.suppressRuntimeContext()
    expect(app.systemPrompt.refreshContext(assembly, { scope: keys.agent }).contexts).toEqual([])
  })

  test('required contexts survive suppression and keep their accepted position', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.context({ name: 'b', order: 1, text: signal('B1'), required: true })
    app.systemPrompt.context({ name: 'c', order: 2, text: 'C', required: true })
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { ...result, contexts: [...result.contexts].reverse() }
    })
    const preparation = await app.systemPrompt.prepare()
    app.systemPrompt.suppressRuntimeContext()
    expect(app.systemPrompt.refreshContext(preparation).contexts).toEqual([
      { name: 'c', text: 'C', registered: true },
      { name: 'b', text: 'B1', registered: true },
    ])
  })

  test('appends missing required registrations in registry order (order, then name)', async () => {
    const { app, keys, scopes, assembly } = await accepted()
    scopes.agent.ctx.systemPrompt.context({ name: 'zeta', order: 1, text: 'Z', required: true })
    scopes.preset.ctx.systemPrompt.context({ name: 'alpha', order: 1, text: 'A', required: true })
    app.systemPrompt.context({ name: 'early', order: -1, text: 'E', required: true })
    app.systemPrompt.context({ name: 'optional', order: -2, text: 'O' })
    expect(names(app.systemPrompt.refreshContext(assembly, { scope: keys.agent }).contexts)).toEqual([
      'time',
      'gone',
      'cwd',
      'added',
      'early',
      'alpha',
      'zeta',
    ])
  })

  test('appends required registrations a suppressed preparation never had', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    const preparation = await app.systemPrompt.prepare()
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'S', required: true })
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    expect(app.systemPrompt.refreshContext(preparation).contexts).toEqual([{ name: 'sandbox', text: 'S', registered: true }])
  })

  test('a required context already in the list is not appended twice', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'S', required: true })
    const preparation = await app.systemPrompt.prepare()
    expect(app.systemPrompt.refreshContext(preparation).contexts).toEqual([{ name: 'sandbox', text: 'S', registered: true }])
  })

  test('re-reads function providers once per refresh', async () => {
    const app = await mount(BARE)
    const provider = vi.fn(() => 'C')
    app.systemPrompt.context({ name: 'c', order: 0, text: provider })
    const preparation = await app.systemPrompt.prepare()
    app.systemPrompt.refreshContext(preparation)
    expect(provider).toHaveBeenCalledTimes(2)
  })

  test('works on a preparation and keeps its variables', async () => {
    const app = await mount(BARE)
    const date = signal('mon')
    app.systemPrompt.variable('v', 'V')
    app.systemPrompt.context({ name: 'date', order: 0, text: date })
    const preparation = await app.systemPrompt.prepare()
    date.value = 'tue'
    expect(app.systemPrompt.refreshContext(preparation)).toEqual({
      variables: { v: 'V' },
      contexts: [{ name: 'date', text: 'tue', registered: true }],
    })
  })

  test('a refreshed result can be refreshed again with the same rules', async () => {
    const { app, keys, time, gone, assembly } = await accepted()
    const once = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    time.value = '11:00'
    await gone()
    expect(app.systemPrompt.refreshContext(once, { scope: keys.agent }).contexts).toEqual([
      { name: 'time', text: '11:00', registered: true },
      { name: 'cwd', text: '/work/11:00', registered: true },
      { name: 'added', text: 'by listener' },
    ])
  })

  test('a refreshed result renders with the accepted variables', async () => {
    const app = await mount(BARE)
    const text = signal('cwd={{cwd}}')
    app.systemPrompt.variable('cwd', '/a')
    app.systemPrompt.context({ name: 'env', order: 0, text })
    const assembly = await app.systemPrompt.assemble()
    text.value = 'dir={{cwd}}'
    expect(renderContextSnapshot(app.systemPrompt.refreshContext(assembly))).toBe(
      'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\ndir=/a',
    )
  })
})
