import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { renderContextSnapshot, type PromptAssembly } from '../../src/index.js'
import { BARE, family, mount, names } from './system-prompt.fixtures.js'

// refreshContext on chains and copies (SPEC §2 "Reliability"): which contexts
// were registrations travels on each context as `registered: true`, so a
// refreshed result, a spread, a structuredClone or a JSON round trip refreshes
// exactly like the original acceptance.

/** An accepted agent assembly: a signal context, a function context, and one a listener added. */
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

const COPIES: Record<string, (assembly: PromptAssembly) => PromptAssembly> = {
  spread: (assembly) => ({ ...assembly }),
  'deep spread': (assembly) => ({ ...assembly, contexts: assembly.contexts.map((c) => ({ ...c })) }),
  structuredClone: (assembly) => structuredClone(assembly),
  'JSON round trip': (assembly) => JSON.parse(JSON.stringify(assembly)) as PromptAssembly,
}

describe('registered contexts carry registered: true', () => {
  test('contexts read from registrations are marked and a listener-added one is not', async () => {
    const { assembly } = await accepted()
    expect(assembly.contexts).toEqual([
      { name: 'time', text: '10:00', registered: true },
      { name: 'gone', text: 'soon gone', registered: true },
      { name: 'cwd', text: '/work/10:00', registered: true },
      { name: 'added', text: 'by listener' },
    ])
  })

  test('the marker is an enumerable data field, so it survives JSON', async () => {
    const { assembly } = await accepted()
    expect(JSON.parse(JSON.stringify(assembly.contexts[0]))).toEqual({ name: 'time', text: '10:00', registered: true })
  })

  test('a listener that spreads a registry context keeps the marker', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'env', order: 0, text: 'E' })
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { ...result, contexts: result.contexts.map((c) => ({ ...c, text: `${c.text}!` })) }
    })
    expect((await app.systemPrompt.prepare()).contexts).toEqual([{ name: 'env', text: 'E!', registered: true }])
  })
})

describe('refreshContext chained', () => {
  test('a required context registered after acceptance and then disposed is dropped from a refreshed result', async () => {
    const { app, keys, assembly } = await accepted()
    const late = app.systemPrompt.context({ name: 'late', order: 5, text: 'L', required: true })
    const once = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    expect(names(once.contexts)).toContain('late')
    await late()
    const twice = app.systemPrompt.refreshContext(once, { scope: keys.agent })
    expect(names(twice.contexts)).toEqual(['time', 'gone', 'cwd', 'added'])
  })

  test('a refreshed result keeps the marker on re-read contexts', async () => {
    const { app, keys, time, assembly } = await accepted()
    time.value = '10:05'
    expect(app.systemPrompt.refreshContext(assembly, { scope: keys.agent }).contexts).toEqual([
      { name: 'time', text: '10:05', registered: true },
      { name: 'gone', text: 'soon gone', registered: true },
      { name: 'cwd', text: '/work/10:05', registered: true },
      { name: 'added', text: 'by listener' },
    ])
  })
})

describe('refreshContext on copies', () => {
  for (const [kind, copy] of Object.entries(COPIES)) {
    test(`a ${kind} copy drops a gone registration, re-reads a live one and keeps a listener-added one`, async () => {
      const { app, keys, time, gone, assembly } = await accepted()
      const copied = copy(assembly)
      time.value = '10:05'
      await gone()
      expect(app.systemPrompt.refreshContext(copied, { scope: keys.agent }).contexts).toEqual([
        { name: 'time', text: '10:05', registered: true },
        { name: 'cwd', text: '/work/10:05', registered: true },
        { name: 'added', text: 'by listener' },
      ])
    })
  }

  test('a JSON copy refreshes and renders like the original', async () => {
    const { app, keys, time, assembly } = await accepted()
    const copied = JSON.parse(JSON.stringify(assembly)) as PromptAssembly
    time.value = '12:00'
    expect(renderContextSnapshot(app.systemPrompt.refreshContext(copied, { scope: keys.agent }))).toBe(
      renderContextSnapshot(app.systemPrompt.refreshContext(assembly, { scope: keys.agent })),
    )
  })
})

describe('refreshContext with another scope', () => {
  test('refreshing an agent assembly with a sibling scope throws, naming both scopes', async () => {
    const { app, keys, assembly } = await accepted()
    expect(() => app.systemPrompt.refreshContext(assembly, { scope: keys.agent2 })).toThrowError(
      /assembled for scope "agent".*scope "agent-2"/,
    )
  })

  test('refreshing an agent assembly without a scope throws, naming the global view', async () => {
    const { app, assembly } = await accepted()
    expect(() => app.systemPrompt.refreshContext(assembly)).toThrowError(/assembled for scope "agent".*the global view/)
  })

  test('refreshing a global preparation with a scope throws', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const preparation = await app.systemPrompt.prepare()
    expect(() => app.systemPrompt.refreshContext(preparation, { scope: keys.agent })).toThrowError(
      /the global view.*scope "agent"/,
    )
  })

  test('a refreshed result and a spread copy remember their scope', async () => {
    const { app, keys, assembly } = await accepted()
    const once = app.systemPrompt.refreshContext(assembly, { scope: keys.agent })
    expect(() => app.systemPrompt.refreshContext(once, { scope: keys.agent2 })).toThrowError(/scope "agent-2"/)
    expect(() => app.systemPrompt.refreshContext({ ...assembly }, { scope: keys.agent2 })).toThrowError(
      /scope "agent-2"/,
    )
  })

  test('a JSON copy, which cannot carry its scope, uses the given scope', async () => {
    const { app, keys, assembly } = await accepted()
    const copied = JSON.parse(JSON.stringify(assembly)) as PromptAssembly
    expect(names(app.systemPrompt.refreshContext(copied, { scope: keys.agent2 }).contexts)).toEqual([
      'time',
      'gone',
      'added',
    ])
  })

  test('the scope is not enumerable data: structuredClone of an assembly for a scope key with methods works', async () => {
    const app = await mount(BARE)
    const agent = { name: 'live-agent', run: () => 'running' }
    const { mintScope } = await import('./system-prompt.fixtures.js')
    const scope = await mintScope(app, agent)
    scope.ctx.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    const assembly = await app.systemPrompt.assemble({ scope: agent })
    expect(structuredClone(assembly).contexts).toEqual([{ name: 'c', text: 'C', registered: true }])
  })
})
