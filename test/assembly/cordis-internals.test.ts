/**
 * Pins the Cordis contract src/assembly/cordis-internals.ts names in its header on a real Context, so a
 * Cordis upgrade that moves listeners, changes how `waterfall` resolves them, how `internal/dispatch`
 * observes dispatches or how a disposed fiber is reported fails here first.
 */
import { Context, Service } from 'cordis'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { cordisBridgeOf, hasListeners as hasHooks } from '../../src/assembly/cordis-internals.js'
import { createScope, SystemPrompt, type PromptPreparation } from '../../src/index.js'

const PREPARE = 'system-prompt/prepare'
const ASSEMBLE = 'system-prompt/assemble'

interface RawEvents {
  readonly _hooks: Readonly<Record<string | symbol, unknown>>
  waterfall(thisArg: object, name: string, ...args: unknown[]): unknown
}

function rawEvents(ctx: Context): RawEvents {
  return (ctx.events as unknown as Record<symbol, RawEvents>)[Symbol.for('cordis.original')]!
}

const hasListeners = (events: RawEvents, name: string | symbol): boolean => hasHooks(events._hooks, name)

const preparation = (): PromptPreparation => ({ variables: {}, contexts: [] })

/** A thisArg whose filter admits only hooks registered from `allowed` (as a scope carrier's does). */
function filteredTo(allowed: Context): object {
  return { [Context.filter]: (ctx: Context) => ctx === allowed }
}

/**
 * Runs the `name` waterfall the way the engine does and reports whether any
 * listener ran; `result` is what it returned (an inner-only waterfall returns
 * `inner()` itself, here a sentinel object, not a promise).
 */
function probe(events: RawEvents, thisArg: object, name: string): { result: unknown; inner: object } {
  const inner = { inner: true }
  const result = events.waterfall(thisArg, name, preparation(), {}, () => inner)
  return { result, inner }
}

describe('hasListeners over Cordis 4 events internals', () => {
  test('is false on a fresh context, and the waterfall then returns inner() itself', () => {
    const app = new Context()
    const events = rawEvents(app)
    expect(hasListeners(events, PREPARE)).toBe(false)
    const { result, inner } = probe(events, app, PREPARE)
    expect(result).toBe(inner)
  })

  test('keeps listeners in a null-prototype _hooks table of arrays (the layout it reads)', () => {
    const app = new Context()
    const events = rawEvents(app)
    expect(Object.getPrototypeOf(events._hooks)).toBe(null)
    const callback = (_p: PromptPreparation, _c: unknown, next: () => Promise<PromptPreparation>) => next()
    app.on(PREPARE, callback)
    const hooks = (events._hooks as Record<string, unknown[]>)[PREPARE]
    expect(Array.isArray(hooks)).toBe(true)
    expect(hooks).toHaveLength(1)
  })

  test('is false with the SystemPrompt plugin loaded (it listens to neither waterfall)', async () => {
    const app = new Context()
    await app.plugin(SystemPrompt)
    const events = rawEvents(app)
    expect(hasListeners(events, PREPARE)).toBe(false)
    expect(hasListeners(events, ASSEMBLE)).toBe(false)
  })

  test('is true after ctx.on from the root, and that listener runs', () => {
    const app = new Context()
    const events = rawEvents(app)
    const listener = vi.fn((p: PromptPreparation, _c: unknown, next: () => Promise<PromptPreparation>) => next())
    app.on(PREPARE, listener)
    expect(hasListeners(events, PREPARE)).toBe(true)
    expect(hasListeners(events, ASSEMBLE)).toBe(false)
    probe(events, app, PREPARE)
    expect(listener).toHaveBeenCalledTimes(1)
  })

  test('is true for a listener registered from a plugin context', async () => {
    const app = new Context()
    const events = rawEvents(app)
    await app.plugin((ctx: Context) => void ctx.on(ASSEMBLE, (p, _c, next) => next()))
    expect(hasListeners(events, ASSEMBLE)).toBe(true)
  })

  test('is true for a listener registered from a scope context', () => {
    const app = new Context()
    const events = rawEvents(app)
    const scope = createScope(app, { name: 'agent' })
    scope.ctx.on(PREPARE, (p, _c, next) => next())
    expect(hasListeners(events, PREPARE)).toBe(true)
  })

  test('is true for a listener the thisArg filter rejects (filters are not consulted, so never skipped wrongly)', async () => {
    const app = new Context()
    const events = rawEvents(app)
    const listener = vi.fn((p: PromptPreparation, _c: unknown, next: () => Promise<PromptPreparation>) => next())
    await app.plugin((ctx: Context) => void ctx.on(PREPARE, listener))
    const { result, inner } = probe(events, filteredTo(app), PREPARE)
    expect(listener).not.toHaveBeenCalled()
    expect(result).toBe(inner)
    expect(hasListeners(events, PREPARE)).toBe(true)
  })

  test('is true for a { global: true } listener, which runs through any filter', async () => {
    const app = new Context()
    const events = rawEvents(app)
    const listener = vi.fn((p: PromptPreparation, _c: unknown, next: () => Promise<PromptPreparation>) => next())
    await app.plugin((ctx: Context) => void ctx.on(PREPARE, listener, { global: true }))
    expect(hasListeners(events, PREPARE)).toBe(true)
    probe(events, filteredTo(app), PREPARE)
    expect(listener).toHaveBeenCalledTimes(1)
  })

  test('is true for a prepended listener, which runs first', () => {
    const app = new Context()
    const events = rawEvents(app)
    const log: string[] = []
    app.on(PREPARE, (p, _c, next) => (log.push('first registered'), next()))
    const dispose = app.on(PREPARE, (p, _c, next) => (log.push('prepended'), next()), { prepend: true })
    app.on(PREPARE, (p, _c, next) => (log.push('last registered'), next()))
    dispose()
    app.on(PREPARE, (p, _c, next) => (log.push('prepended again'), next()), { prepend: true })
    expect(hasListeners(events, PREPARE)).toBe(true)
    probe(events, app, PREPARE)
    expect(log).toEqual(['prepended again', 'first registered', 'last registered'])
  })

  test('is false again after the disposer runs', () => {
    const app = new Context()
    const events = rawEvents(app)
    const dispose = app.on(PREPARE, (p, _c, next) => next(), { prepend: true })
    dispose()
    expect(hasListeners(events, PREPARE)).toBe(false)
    const { result, inner } = probe(events, app, PREPARE)
    expect(result).toBe(inner)
  })

  test('is false again after the owning plugin or scope is disposed', async () => {
    const app = new Context()
    const events = rawEvents(app)
    const fiber = app.plugin((ctx: Context) => void ctx.on(PREPARE, (p, _c, next) => next(), { global: true }))
    await fiber
    const scope = createScope(app, { name: 'agent' })
    scope.ctx.on(ASSEMBLE, (p, _c, next) => next())
    await fiber.dispose()
    await scope.dispose()
    expect(hasListeners(events, PREPARE)).toBe(false)
    expect(hasListeners(events, ASSEMBLE)).toBe(false)
  })

  test('is false again after a once() listener has run', () => {
    const app = new Context()
    const events = rawEvents(app)
    app.once(PREPARE, (p, _c, next) => next())
    probe(events, app, PREPARE)
    expect(hasListeners(events, PREPARE)).toBe(false)
  })

  test('is true while an internal/dispatch observer exists, which sees every such waterfall', () => {
    const app = new Context()
    const events = rawEvents(app)
    const seen: unknown[] = []
    const dispose = app.on('internal/dispatch', (mode, name) => void seen.push([mode, name]))
    expect(hasListeners(events, PREPARE)).toBe(true)
    expect(hasListeners(events, Symbol('custom'))).toBe(true)
    probe(events, app, PREPARE)
    expect(seen).toEqual([['waterfall', PREPARE]])
    dispose()
    expect(hasListeners(events, PREPARE)).toBe(false)
  })

  test('ignores an internal/dispatch observer for internal/ names, which Cordis does not report to it', () => {
    const app = new Context()
    const events = rawEvents(app)
    const observer = vi.fn()
    app.on('internal/dispatch', observer)
    app.emit('internal/service', 'x', undefined)
    expect(observer).not.toHaveBeenCalled()
    expect(hasListeners(events, 'internal/service')).toBe(false)
  })

  test('is false for a listener an internal/listener interceptor claims (waterfall never calls it)', () => {
    const app = new Context()
    const events = rawEvents(app)
    app.on('internal/listener', (name) => (name === PREPARE ? () => true : undefined))
    const listener = vi.fn((p: PromptPreparation, _c: unknown, next: () => Promise<PromptPreparation>) => next())
    app.on(PREPARE, listener)
    const { result, inner } = probe(events, app, PREPARE)
    expect(listener).not.toHaveBeenCalled()
    expect(result).toBe(inner)
    expect(hasListeners(events, PREPARE)).toBe(false)
  })

  test('answers true for a hook list that is not an array (a layout it does not know)', () => {
    expect(hasHooks({ [PREPARE]: { not: 'an array' } }, PREPARE)).toBe(true)
  })
})

describe('the Cordis bridge', () => {
  test('takes the internal path on the pinned Cordis', () => {
    expect(cordisBridgeOf(new Context()).path).toBe('internal')
  })

  test('takes the public path when the raw events service is not where the contract puts it', () => {
    const app = new Context()
    const events = new Proxy(app.events, { get: (target, prop, receiver) => (prop === Symbol.for('cordis.original') ? undefined : Reflect.get(target, prop, receiver)) })
    const ctx = new Proxy(app, { get: (target, prop, receiver) => (prop === 'events' ? events : Reflect.get(target, prop, receiver)) })
    const bridge = cordisBridgeOf(ctx)
    expect(bridge.path).toBe('public')
    expect(bridge.mayHear(PREPARE)).toBe(true)
  })

  test('dispatch("emit") resolves the listeners of an event, bound and in order, without calling them', () => {
    const app = new Context()
    const raw = rawEvents(app) as RawEvents & { dispatch(mode: 'emit', args: [string]): (() => unknown)[] }
    const log: string[] = []
    app.on('bridge/probe' as 'system-prompt/change', () => void log.push('first'))
    app.on('bridge/probe' as 'system-prompt/change', () => void log.push('second'))
    const listeners = raw.dispatch('emit', ['bridge/probe'])
    expect(log).toEqual([])
    for (const listener of listeners) listener()
    expect(log).toEqual(['first', 'second'])
  })

  test('reports a disposed plugin fiber through internal/plugin with uid null, and its unload through inertia', async () => {
    const app = new Context()
    const seen: [uid: unknown, unloading: boolean][] = []
    app.on('internal/plugin', (fiber) => {
      const raw = fiber as unknown as { uid: unknown; inertia: unknown }
      seen.push([raw.uid, raw.inertia instanceof Promise])
    })
    let finish!: () => void
    const unloading = new Promise<void>((resolve) => (finish = resolve))
    const fiber = app.plugin((ctx: Context) => void ctx.effect(() => () => unloading))
    await fiber
    seen.length = 0
    const raw = fiber as unknown as { inertia: Promise<void> | undefined }
    const done = fiber.dispose()
    expect(seen).toEqual([[null, false]])
    await undefined
    expect(raw.inertia).toBeInstanceOf(Promise)
    finish()
    await done
    expect(raw.inertia).toBeUndefined()
  })
})

const ORIGINAL = Symbol.for('cordis.original')

interface ReflectHandler {
  get(target: object, prop: string | symbol, receiver: object): unknown
}

let restoreHandler: (() => void) | undefined
afterEach(() => {
  restoreHandler?.()
  restoreHandler = undefined
})

/** Counts `ctx.reflect` reads through Cordis' context proxy (the static handler of its ReflectService) while `run` runs. */
function countReflectReads(app: Context, run: () => void): number {
  const handler = (app.reflect as unknown as Record<symbol, { constructor: { handler: ReflectHandler } }>)[ORIGINAL]!.constructor.handler
  const original = handler.get
  let reads = 0
  handler.get = (target, prop, receiver) => {
    if (prop === 'reflect') reads++
    return original(target, prop, receiver)
  }
  restoreHandler = () => void (handler.get = original)
  try {
    run()
  } finally {
    restoreHandler()
    restoreHandler = undefined
  }
  return reads
}

describe('the systemPrompt service tracker', () => {
  test('Cordis keeps it under Service.tracker with property "ctx"; the service sets noShadow and clears associate', async () => {
    const app = new Context()
    await app.plugin(SystemPrompt)
    const raw = (app.systemPrompt as unknown as Record<symbol, Record<symbol, { property?: string; noShadow?: boolean; associate?: string }>>)[ORIGINAL]!
    const tracker = raw[Service.tracker]!
    expect(tracker.property).toBe('ctx')
    expect(tracker.noShadow).toBe(true)
    expect(tracker.associate).toBeUndefined()
  })

  test('hands out methods unshadowed, and a method read does not read ctx.reflect', async () => {
    const app = new Context()
    await app.plugin(SystemPrompt)
    const sp = app.systemPrompt
    expect(sp.assemble).toBe(SystemPrompt.prototype.assemble)
    expect(countReflectReads(app, () => void sp.assemble)).toBe(0)
  })

  test('a declared systemPrompt.* accessor is read through the context, and only while declared', async () => {
    const app = new Context()
    await app.plugin(SystemPrompt)
    const withdraw = app.reflect.accessor('systemPrompt.extra', { get: () => 42 })
    const sp = app.systemPrompt as unknown as Record<string, unknown>
    expect(sp.extra).toBe(42)
    withdraw()
    expect(sp.extra).toBeUndefined()
  })
})
