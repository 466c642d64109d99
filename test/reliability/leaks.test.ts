import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { collectedCount as collected } from './collect.js'
import type { Pipeline as Engine } from '../../src/assembly/pipeline.js'
import {
  createScope,
  renderContextSnapshot,
  renderPrompt,
  SystemPrompt,
  type Scope,
  type ScopeKey,
} from '../../src/index.js'
import { census, growth, type Census } from './census.js'

// SPEC §2 Reliability: "Nothing is retained for a disposed scope or an
// unreachable scope key". Two kinds of proof:
//   structural  Cordis' own books (fibers, effects, listeners; census.ts) and
//               the registry's layer slots return to where they started;
//   collection  a WeakRef to a scope's memoized view (its computed graph,
//               tool memo and render memos) dies after a forced GC, even
//               while the test still holds the scope key.
// test/system-prompt.retention.test.ts proves the keys themselves collectable.


/** The service's engine, reached through its private symbol (internals on purpose: layer slots). */
function engineOf(app: Context): Engine {
  const service = app.systemPrompt as unknown as Record<symbol, unknown>
  const symbol = Object.getOwnPropertySymbols(service).find((s) => s.description === 'promptloom.engine')!
  return service[symbol] as Engine
}

/** The counts a test compares; labels and names, so a failure says what leaked. */
function books(app: Context): Pick<Census, 'fibers' | 'effects' | 'listeners' | 'effectLabels' | 'listenerNames'> {
  const { fibers, effects, listeners, effectLabels, listenerNames } = census(app)
  return { fibers, effects, listeners, effectLabels, listenerNames }
}

async function mount(): Promise<{ app: Context; minter: Context }> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  let minter!: Context
  await app.inject(['systemPrompt'], (ctx) => {
    minter = ctx
  })
  app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello {{user}}.' })
  app.systemPrompt.variable('user', 'Ada')
  return { app, minter }
}

/** Registers one of everything through `scope`, plus a listener of each waterfall, then assembles and renders it. */
async function furnish(app: Context, scope: Scope, key: ScopeKey, text = signal('S {{cwd}}')): Promise<WeakRef<object>> {
  const sp = scope.ctx.systemPrompt
  sp.section({ name: 'task', order: 10, text })
  sp.section({ name: 'notes', order: 20, text: () => 'N' })
  sp.context({ name: 'job', order: 110, text: 'job in {{cwd}}', required: true })
  sp.variable('cwd', () => '/work')
  const own = { schemas: [{ name: `bash-${(key as { name: string }).name}`, description: 'run', parameters: {} }] }
  sp.tools(() => own)
  sp.suppressRuntimeContext()
  scope.ctx.on('system-prompt/prepare', async (_p, _c, next) => next())
  scope.ctx.on('system-prompt/assemble', async (_p, _c, next) => next())
  const assembly = await app.systemPrompt.assemble({ scope: key })
  renderPrompt(assembly)
  renderContextSnapshot(assembly)
  app.systemPrompt.inspect(key)
  return new WeakRef(engineOf(app).views.view(key))
}

describe('disposing a scope releases everything promptloom held for it', () => {
  test('its fiber, effects and listeners leave Cordis’ books', async () => {
    const { app, minter } = await mount()
    const before = books(app)
    const key = { name: 'agent' }
    const scope = createScope(minter, key)
    await furnish(app, scope, key)
    expect(census(app).scopeFibers).toBe(1)
    await scope.dispose()
    expect(books(app)).toEqual(before)
    expect(scope.ctx.fiber.getEffects()).toEqual([])
  })

  test('its layer slot is reclaimed and its inspection falls back to its parent’s', async () => {
    const { app, minter } = await mount()
    const preset = { name: 'preset' }
    const key = { name: 'agent' }
    const scope = createScope(minter, key, { parent: preset })
    await furnish(app, scope, key)
    expect(engineOf(app).store.peek(key)).toBeDefined()
    await scope.dispose()
    expect(engineOf(app).store.peek(key)).toBeUndefined()
    expect(app.systemPrompt.inspect(key)).toEqual(app.systemPrompt.inspect(preset))
    expect(await app.systemPrompt.assemble({ scope: key })).toEqual(await app.systemPrompt.assemble({ scope: preset }))
  })

  test('its memoized view is collected while the key and a registered signal are still held', async () => {
    const { app, minter } = await mount()
    const key = { name: 'agent' }
    const text = signal('S {{cwd}}')
    const scope = createScope(minter, key)
    const view = await furnish(app, scope, key, text)
    await scope.dispose()
    text.value = 'written after the disposal'
    await app.systemPrompt.assemble()
    expect(await collected([view])).toBe(1)
    expect(key.name).toBe('agent')
  })

  test('a nested scope is released with its parent scope', async () => {
    const { app, minter } = await mount()
    const before = books(app)
    const outerKey = { name: 'outer' }
    const innerKey = { name: 'inner' }
    const outer = createScope(minter, outerKey)
    const inner = createScope(outer.ctx, innerKey, { parent: outerKey })
    const views = [await furnish(app, outer, outerKey), await furnish(app, inner, innerKey)]
    await outer.dispose()
    expect(books(app)).toEqual(before)
    expect([engineOf(app).store.peek(outerKey), engineOf(app).store.peek(innerKey)]).toEqual([undefined, undefined])
    expect(await collected(views)).toBe(2)
  })
})

describe('a parent scope disposed under live, idle child scopes', () => {
  test('its registrations and view are collected before any child assembles again', async () => {
    const { app, minter } = await mount()
    const presetKey = { name: 'preset' }
    const agentKey = { name: 'agent' }
    const preset = createScope(minter, presetKey)
    const agent = createScope(minter, agentKey, { parent: presetKey })
    agent.ctx.systemPrompt.section({ name: 'own', order: 2, text: 'own' })
    const held = (() => {
      const payload = { lines: ['preset policy'] }
      preset.ctx.systemPrompt.section({ name: 'policy', order: 1, text: () => payload.lines.join('\n') })
      return new WeakRef(payload)
    })()
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: agentKey }))).toBe('Hello Ada.\n\npreset policy\n\nown')
    const presetView = new WeakRef(engineOf(app).views.view(presetKey))
    await preset.dispose()
    expect(await collected([held, presetView])).toBe(2)
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: agentKey }))).toBe('Hello Ada.\n\nown')
    await agent.dispose()
  })
})

describe('views created while a scope is torn down', () => {
  test('a change listener that re-assembles the scope during its teardown leaves no view behind', async () => {
    const { app, minter } = await mount()
    const before = books(app)
    const key = { name: 'agent' }
    const scope = createScope(minter, key)
    const views = [await furnish(app, scope, key)]
    const reassemblies: Promise<unknown>[] = []
    // The harness pattern: every change re-assembles the agent, also while its
    // registrations are removed one microtask at a time.
    const stop = app.on('system-prompt/change', () => {
      const assembly = app.systemPrompt.assemble({ scope: key })
      // assemble() took its view synchronously: this is that view, not a new one.
      views.push(new WeakRef(engineOf(app).views.view(key)))
      reassemblies.push(assembly)
    })
    await scope.dispose()
    await Promise.all(reassemblies)
    stop()
    expect(reassemblies.length).toBeGreaterThan(1)
    expect(books(app)).toEqual(before)
    expect(await collected(views)).toBe(views.length)
    expect(key.name).toBe('agent')
  })
})

describe('unloading a plugin releases everything it registered', () => {
  test('its global and scoped registrations, scopes, listeners and views', async () => {
    const { app } = await mount()
    const before = books(app)
    const inspection = app.systemPrompt.inspect()
    const keys = [{ name: 'a' }, { name: 'b' }]
    const views: WeakRef<object>[] = []
    const fiber = app.inject(['systemPrompt'], async (ctx) => {
      ctx.systemPrompt.section({ name: 'plugin', order: 5, text: 'from the plugin' })
      ctx.systemPrompt.tools(() => ({ schemas: [{ name: 'grep', description: 'search', parameters: {} }] }))
      ctx.on('system-prompt/assemble', async (_p, _c, next) => next())
      for (const key of keys) views.push(await furnish(app, createScope(ctx, key), key))
    })
    await fiber
    expect(census(app).scopeFibers).toBe(2)
    await fiber.dispose()
    expect(books(app)).toEqual(before)
    expect(app.systemPrompt.inspect()).toEqual(inspection)
    expect(keys.map((key) => engineOf(app).store.peek(key))).toEqual([undefined, undefined])
    expect(await collected(views)).toBe(2)
  })

  test('unloading the SystemPrompt plugin removes its change effect and listeners', async () => {
    const app = new Context()
    const before = books(app)
    const fiber = app.plugin(SystemPrompt)
    await fiber
    const changes = signal('x')
    app.systemPrompt.section({ name: 'a', order: 0, text: changes })
    expect(books(app).effects).toBeGreaterThan(before.effects)
    await fiber.dispose()
    // The registration made through the root context is owned by the root (Cordis ownership), so it stays.
    expect(growth(before.effectLabels, books(app).effectLabels)).toEqual({ 'systemPrompt.section()': 1 })
    expect(books(app).listenerNames).toEqual(before.listenerNames)
  })
})

describe('unreachable scope keys', () => {
  test('views made for keys that were only assembled, rendered and inspected are all collected', async () => {
    const { app } = await mount()
    const views = await (async () => {
      const refs: WeakRef<object>[] = []
      for (let i = 0; i < 200; i++) {
        const key = { name: `ghost-${i}` }
        const assembly = await app.systemPrompt.assemble({ scope: key })
        renderPrompt(assembly)
        app.systemPrompt.inspect(key)
        refs.push(new WeakRef(engineOf(app).views.view(key)))
      }
      return refs
    })()
    expect(await collected(views)).toBe(views.length)
  })
})

describe('churn', () => {
  test('1,000 scopes minted, furnished, assembled and disposed leave the books where they started', async () => {
    const { app, minter } = await mount()
    const before = books(app)
    const views: WeakRef<object>[] = []
    for (let round = 0; round < 10; round++) {
      const live = Array.from({ length: 100 }, (_, i) => {
        const key = { name: `agent-${round}-${i}` }
        return { key, scope: createScope(minter, key) }
      })
      for (const { key, scope } of live) {
        const view = await furnish(app, scope, key)
        if (round % 5 === 0) views.push(view)
      }
      await Promise.all(live.map(({ scope }) => scope.dispose()))
      expect(books(app)).toEqual(before)
    }
    expect(await collected(views)).toBe(views.length)
  })
})
