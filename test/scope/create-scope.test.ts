import { Context } from 'cordis'
import { describe, expect, expectTypeOf, test } from 'vitest'
import { bindScopeParent, createScope, scopeOf, scopeParentOf } from '../../src/index.js'

/** A promise plus the function that resolves it, for gating an async teardown. */
function gate(): { readonly promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

/** Labels of the effects a context's fiber currently holds, less the root's one listener that explains root-minted scopes (unreachable-service.test.ts). */
function effectLabels(ctx: Context): string[] {
  return ctx.fiber
    .getEffects()
    .map((meta) => meta.label)
    .filter((label) => label !== 'ctx.on("internal/get")')
}

describe('createScope', () => {
  test('tags the returned context with the key', () => {
    const key = { name: 'agent' }
    expect(scopeOf(createScope(new Context(), key).ctx)).toBe(key)
  })

  test('leaves the minting context untagged', () => {
    const app = new Context()
    createScope(app, {})
    expect(scopeOf(app)).toBeUndefined()
  })

  test('mints a child fiber of the given context', () => {
    const app = new Context()
    const scope = createScope(app, {})
    expect(scope.ctx.fiber).not.toBe(app.fiber)
    expect(scope.ctx.fiber.parent).toBe(app)
  })

  test('holds the scope fiber as one effect of the minting fiber', () => {
    const app = new Context()
    createScope(app, {})
    expect(effectLabels(app)).toEqual(['ctx.plugin()'])
  })

  test('contexts derived with extend() inherit the tag', () => {
    const key = {}
    const scope = createScope(new Context(), key)
    expect(scopeOf(scope.ctx.extend({}))).toBe(key)
  })

  test('plugins loaded under scope.ctx inherit the tag', async () => {
    const key = {}
    const scope = createScope(new Context(), key)
    let seen: Context | undefined
    await scope.ctx.plugin((ctx: Context) => {
      seen = ctx
    })
    expect(seen !== undefined && scopeOf(seen)).toBe(key)
  })

  test('a nested createScope shadows the outer tag (nearest tag wins)', () => {
    const outer = createScope(new Context(), { name: 'outer' })
    const innerKey = { name: 'inner' }
    const inner = createScope(outer.ctx, innerKey)
    expect(scopeOf(inner.ctx)).toBe(innerKey)
  })

  test('a nested createScope leaves the outer context tagged with the outer key', () => {
    const outerKey = {}
    const outer = createScope(new Context(), outerKey)
    createScope(outer.ctx, {})
    expect(scopeOf(outer.ctx)).toBe(outerKey)
  })

  test('can mint several scopes for the same key', () => {
    const key = {}
    const app = new Context()
    const first = createScope(app, key)
    const second = createScope(app, key)
    expect([scopeOf(first.ctx), scopeOf(second.ctx)]).toEqual([key, key])
    expect(first.ctx.fiber).not.toBe(second.ctx.fiber)
  })

  test('throws a TypeError for a non-object key', () => {
    expect(() => createScope(new Context(), 'agent' as unknown as object)).toThrow(TypeError)
  })

  test('a bad key is described, not printed: a string is quoted, null named', () => {
    expect(() => createScope(new Context(), 'agent' as never)).toThrowError(
      'createScope() key must be a scope key object (got string "agent")',
    )
    expect(() => createScope(new Context(), null as never)).toThrowError(
      'createScope() key must be a scope key object (got null)',
    )
  })

  test('accepts a class or a function as the key (a ScopeKey is any object, compared by identity)', async () => {
    class Agent {}
    const callable = () => 'run'
    const app = new Context()
    expect(scopeOf(createScope(app, Agent).ctx)).toBe(Agent)
    expect(scopeOf(createScope(app, callable, { parent: Agent }).ctx)).toBe(callable)
    expect(scopeParentOf(callable)).toBe(Agent)
  })
})

describe('Scope ownership', () => {
  test('dispose() runs the disposers of effects registered through scope.ctx', async () => {
    const scope = createScope(new Context(), {})
    const log: string[] = []
    scope.ctx.effect(() => () => void log.push('undone'), 'test effect')
    await scope.dispose()
    expect(log).toEqual(['undone'])
  })

  test('dispose() runs the disposers of effects registered through a derived context', async () => {
    const scope = createScope(new Context(), {})
    const log: string[] = []
    scope.ctx.extend().effect(() => () => void log.push('undone'), 'test effect')
    await scope.dispose()
    expect(log).toEqual(['undone'])
  })

  test('disposing the outer scope tears down a nested scope', async () => {
    const outer = createScope(new Context(), {})
    const inner = createScope(outer.ctx, {})
    const log: string[] = []
    inner.ctx.effect(() => () => void log.push('inner undone'), 'test effect')
    await outer.dispose()
    expect(log).toEqual(['inner undone'])
  })

  test('unloading the minting plugin tears the scope down', async () => {
    const app = new Context()
    const log: string[] = []
    const fiber = app.plugin((ctx: Context) => {
      createScope(ctx, {}).ctx.effect(() => () => void log.push('undone'), 'test effect')
    })
    await fiber
    await fiber.dispose()
    expect(log).toEqual(['undone'])
  })

  test('disposing one scope of a key keeps the other scope of that key', async () => {
    const key = {}
    const app = new Context()
    const first = createScope(app, key)
    const second = createScope(app, key)
    const log: string[] = []
    first.ctx.effect(() => () => void log.push('first undone'), 'test effect')
    second.ctx.effect(() => () => void log.push('second undone'), 'test effect')
    await first.dispose()
    expect(log).toEqual(['first undone'])
  })
})

describe('Scope.rawDispose', () => {
  test('is the exact disposer of the scope fiber', () => {
    const scope = createScope(new Context(), {})
    expect(scope.rawDispose).toBe(scope.ctx.fiber.dispose)
  })

  test('is typed as what it returns: a promise on the first call, undefined on a later one', async () => {
    const scope = createScope(new Context(), {})
    expectTypeOf(scope.rawDispose).toEqualTypeOf<() => Promise<void> | undefined>()
    const first = scope.rawDispose()
    expect(first).toBeInstanceOf(Promise)
    expect(scope.rawDispose()).toBeUndefined()
    await first
  })

  test('tears the scope down', async () => {
    const scope = createScope(new Context(), {})
    const log: string[] = []
    scope.ctx.effect(() => () => void log.push('undone'), 'test effect')
    await scope.rawDispose()
    expect(log).toEqual(['undone'])
  })

  test('removes the scope fiber from the minting fiber', async () => {
    const app = new Context()
    const scope = createScope(app, {})
    await scope.rawDispose()
    expect(effectLabels(app)).toEqual([])
  })
})

describe('Scope.dispose', () => {
  test('resolves to undefined', async () => {
    const scope = createScope(new Context(), {})
    await expect(scope.dispose()).resolves.toBeUndefined()
  })

  test('is idempotent (a second call runs no disposer again)', async () => {
    const scope = createScope(new Context(), {})
    const log: string[] = []
    scope.ctx.effect(() => () => void log.push('undone'), 'test effect')
    await scope.dispose()
    await scope.dispose()
    expect(log).toEqual(['undone'])
  })

  test('concurrent calls return the same promise', () => {
    const scope = createScope(new Context(), {})
    const first = scope.dispose()
    expect(scope.dispose()).toBe(first)
  })

  test('a call after settling returns the same settled promise', async () => {
    const scope = createScope(new Context(), {})
    const first = scope.dispose()
    await first
    expect(scope.dispose()).toBe(first)
  })

  test('settles only after an async teardown finished', async () => {
    const scope = createScope(new Context(), {})
    const teardown = gate()
    const log: string[] = []
    scope.ctx.effect(
      () => async () => {
        await teardown.promise
        log.push('teardown finished')
      },
      'test effect',
    )
    const disposed = scope.dispose().then(() => void log.push('dispose settled'))
    teardown.open()
    await disposed
    expect(log).toEqual(['teardown finished', 'dispose settled'])
  })

  test('settles only after teardown also when rawDispose was called first', async () => {
    const scope = createScope(new Context(), {})
    const teardown = gate()
    const log: string[] = []
    scope.ctx.effect(
      () => async () => {
        await teardown.promise
        log.push('teardown finished')
      },
      'test effect',
    )
    const raw = scope.rawDispose()
    const disposed = scope.dispose().then(() => void log.push('dispose settled'))
    teardown.open()
    await Promise.all([raw, disposed])
    expect(log).toEqual(['teardown finished', 'dispose settled'])
  })

  test('settles after an already finished rawDispose', async () => {
    const scope = createScope(new Context(), {})
    const log: string[] = []
    scope.ctx.effect(() => () => void log.push('undone'), 'test effect')
    await scope.rawDispose()
    await scope.dispose()
    expect(log).toEqual(['undone'])
  })

  test('settles after teardown when the minting plugin was unloaded first', async () => {
    const app = new Context()
    const teardown = gate()
    const log: string[] = []
    let scope: ReturnType<typeof createScope> | undefined
    const fiber = app.plugin((ctx: Context) => {
      scope = createScope(ctx, {})
      scope.ctx.effect(
        () => async () => {
          await teardown.promise
          log.push('teardown finished')
        },
        'test effect',
      )
    })
    await fiber
    const unloaded = fiber.dispose()
    const disposed = scope!.dispose().then(() => void log.push('dispose settled'))
    teardown.open()
    await Promise.all([unloaded, disposed])
    expect(log).toEqual(['teardown finished', 'dispose settled'])
  })
})

describe('createScope options.parent', () => {
  test('binds the parent', () => {
    const preset = {}
    const agent = {}
    createScope(new Context(), agent, { parent: preset })
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('accepts re-minting the same key with the same parent', () => {
    const preset = {}
    const agent = {}
    const app = new Context()
    createScope(app, agent, { parent: preset })
    const again = createScope(app, agent, { parent: preset })
    expect(scopeOf(again.ctx)).toBe(agent)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('accepts minting with the parent a key was already bound to elsewhere', () => {
    const preset = {}
    const agent = {}
    bindScopeParent(agent, preset)
    expect(() => createScope(new Context(), agent, { parent: preset })).not.toThrow()
  })

  test('throws "already bound" when re-minting the key with a different parent', () => {
    const agent = { name: 'agent' }
    const app = new Context()
    createScope(app, agent, { parent: {} })
    expect(() => createScope(app, agent, { parent: {} })).toThrow(/"agent" is already bound/)
  })

  test('a re-mint rejected as already bound keeps the first parent', () => {
    const preset = {}
    const agent = {}
    const app = new Context()
    createScope(app, agent, { parent: preset })
    expect(() => createScope(app, agent, { parent: {} })).toThrow(/already bound/)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('a re-mint rejected as already bound mints no fiber', () => {
    const agent = {}
    const app = new Context()
    createScope(app, agent, { parent: {} })
    expect(() => createScope(app, agent, { parent: {} })).toThrow(/already bound/)
    expect(effectLabels(app)).toEqual(['ctx.plugin()'])
  })

  test('throws "cycle" for a key that is its own parent, minting no fiber', () => {
    const agent = {}
    const app = new Context()
    expect(() => createScope(app, agent, { parent: agent })).toThrow(/cycle/)
    expect(effectLabels(app)).toEqual([])
  })

  test('throws "cycle" for a parent below the key', () => {
    const preset = {}
    const agent = {}
    bindScopeParent(agent, preset)
    expect(() => createScope(new Context(), preset, { parent: agent })).toThrow(/cycle/)
  })

  test('a mint that throws on an inactive context binds no parent', async () => {
    const app = new Context()
    const fiber = app.plugin((ctx: Context) => void ctx)
    await fiber
    const plugin = fiber.ctx
    await fiber.dispose()
    const agent = {}
    expect(() => createScope(plugin, agent, { parent: {} })).toThrow(/inactive/)
    expect(scopeParentOf(agent)).toBeUndefined()
  })

  test('minting without a parent keeps an existing binding', () => {
    const preset = {}
    const agent = {}
    bindScopeParent(agent, preset)
    createScope(new Context(), agent)
    expect(scopeParentOf(agent)).toBe(preset)
  })
})
