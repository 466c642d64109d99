/**
 * Pins the Cordis 4 effect contract src/scope/fiber-effect.ts relies on, on a
 * real Context: `ctx.effect` is `ctx.fiber.effect` bound to the fiber, and an
 * error thrown by an effect's execute while Cordis' own stack-decoration
 * errors are empty reaches the caller exactly as thrown. Then checks that
 * `fiberEffect` is the same effect as `ctx.effect` in every way a caller sees.
 */
import { Context, Fiber } from 'cordis'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { fiberEffect } from '../../src/scope/fiber-effect.js'

afterEach(() => {
  vi.restoreAllMocks()
})

async function plugin(): Promise<Context> {
  const app = new Context()
  let ctx!: Context
  await app.plugin((c: Context) => {
    ctx = c
  })
  return ctx
}

describe('the Cordis contract fiberEffect relies on', () => {
  test('ctx.effect calls fiber.effect on ctx.fiber with the same arguments', async () => {
    const ctx = await plugin()
    const spy = vi.spyOn(Fiber.prototype, 'effect')
    const execute = () => () => {}
    const dispose = ctx.effect(execute, 'probe')
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.contexts[0]).toBe(ctx.fiber)
    expect(spy.mock.calls[0]).toEqual([execute, 'probe'])
    expect(spy.mock.results[0]!.value).toBe(dispose)
    expect(Object.hasOwn(Object.getPrototypeOf(ctx.fiber), Symbol.for('cordis.tracker'))).toBe(false)
  })

  test('an error thrown by execute while Error.stackTraceLimit was 0 at the call comes back as thrown', async () => {
    const ctx = await plugin()
    const thrown = new Error('from execute')
    const stack = thrown.stack
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    let caught: unknown
    try {
      ctx.fiber.effect(() => {
        Error.stackTraceLimit = limit
        throw thrown
      }, 'probe')
    } catch (error) {
      caught = error
    } finally {
      Error.stackTraceLimit = limit
    }
    expect(caught).toBe(thrown)
    expect((caught as Error).stack).toBe(stack)
    expect(ctx.fiber.getEffects()).toEqual([])
  })
})

describe('fiberEffect', () => {
  test('returns the disposer the fiber holds, labelled, and runs execute once', async () => {
    const ctx = await plugin()
    const execute = vi.fn(() => () => {})
    const dispose = fiberEffect(ctx, execute, 'probe.register()')
    expect(execute).toHaveBeenCalledTimes(1)
    expect([...ctx.fiber._disposables]).toContain(dispose)
    expect(ctx.fiber.getEffects().map((meta) => meta.label)).toEqual(['probe.register()'])
  })

  test('the cleanup runs once on dispose, and again never', async () => {
    const ctx = await plugin()
    const cleanup = vi.fn()
    const dispose = fiberEffect(ctx, () => cleanup, 'probe')
    await dispose()
    await dispose()
    expect(cleanup).toHaveBeenCalledTimes(1)
    expect(ctx.fiber.getEffects()).toEqual([])
  })

  test('the cleanup runs when the owning fiber is disposed', async () => {
    const app = new Context()
    const cleanup = vi.fn()
    const fiber = app.plugin((ctx: Context) => void fiberEffect(ctx, () => cleanup, 'probe'))
    await fiber
    await fiber.dispose()
    expect(cleanup).toHaveBeenCalledTimes(1)
  })

  test('leaves Error.stackTraceLimit as it found it, on success and on a throw', async () => {
    const ctx = await plugin()
    const limit = Error.stackTraceLimit
    let inside: number | undefined
    fiberEffect(ctx, () => ((inside = Error.stackTraceLimit), () => {}), 'probe')
    expect(inside).toBe(limit)
    expect(() =>
      fiberEffect(ctx, () => {
        throw new Error('refused')
      }, 'probe'),
    ).toThrow('refused')
    expect(Error.stackTraceLimit).toBe(limit)
  })

  test('an error from execute keeps its own stack, naming the caller', async () => {
    const ctx = await plugin()
    function registerTheDuplicate(): void {
      fiberEffect(ctx, () => {
        throw new Error('already registered')
      }, 'probe')
    }
    let caught: Error | undefined
    try {
      registerTheDuplicate()
    } catch (error) {
      caught = error as Error
    }
    expect(caught?.message).toBe('already registered')
    expect(caught?.stack).toContain('registerTheDuplicate')
    expect(ctx.fiber.getEffects()).toEqual([])
  })

  test('on an inactive fiber throws Cordis\' own error, with a stack', async () => {
    const app = new Context()
    let ctx!: Context
    const fiber = app.plugin((c: Context) => void (ctx = c))
    await fiber
    await fiber.dispose()
    const execute = vi.fn(() => () => {})
    let caught: Error | undefined
    try {
      fiberEffect(ctx, execute, 'probe')
    } catch (error) {
      caught = error as Error
    }
    let plain: Error | undefined
    try {
      ctx.effect(execute, 'probe')
    } catch (error) {
      plain = error as Error
    }
    expect(caught).toBeInstanceOf(Error)
    expect(caught?.message).toBe(plain?.message)
    expect(caught?.stack?.split('\n').length).toBeGreaterThan(1)
    expect(execute).not.toHaveBeenCalled()
  })

  test('with Error.stackTraceLimit read-only (a hardened realm) it makes the plain call and the effect still runs', async () => {
    const ctx = await plugin()
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!
    Object.defineProperty(Error, 'stackTraceLimit', { ...descriptor, writable: false })
    try {
      let ran = 0
      const dispose = fiberEffect(ctx, () => {
        ran++
        return () => {}
      }, 'read-only limit')
      expect(ran).toBe(1)
      expect(typeof dispose).toBe('function')
      await dispose()
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor)
    }
  })
})
