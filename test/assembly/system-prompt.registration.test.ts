import { computed, signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, test, vi } from 'vitest'
import { createScope, renderPrompt, type Scope, type ScopeKey, type SystemPrompt } from '../../src/index.js'
import { BARE, family, mintScope, mount, names, ownSections, tool } from './system-prompt.fixtures.js'

type Registrar = (sp: SystemPrompt, name: string) => () => Promise<void> | undefined

/** One registration of each kind, keyed by the Cordis effect label it must carry. */
const REGISTRATIONS: [string, Registrar][] = [
  ['systemPrompt.section()', (sp, name) => sp.section({ name, order: 0, text: 'S' })],
  ['systemPrompt.context()', (sp, name) => sp.context({ name, order: 0, text: 'C' })],
  ['systemPrompt.variable()', (sp, name) => sp.variable(name, 'V')],
  ['systemPrompt.tools()', (sp, name) => sp.tools(() => ({ schemas: [tool(name)] }))],
  ['systemPrompt.suppressRuntimeContext()', (sp) => sp.suppressRuntimeContext()],
]

type EffectMeta = { label: string }

function effectMetaOf(dispose: () => unknown): EffectMeta | undefined {
  return (dispose as unknown as Record<symbol, EffectMeta | undefined>)[Context.effect]
}

/** A snapshot of everything observable about one view, to prove that nothing changed. */
async function observe(app: Context, scope?: ScopeKey) {
  const sp = app.systemPrompt
  return { inspect: sp.inspect(scope), assembly: await sp.assemble({ scope }) }
}

function countChanges(app: Context): { readonly count: number } {
  const counter = { count: 0 }
  app.on('system-prompt/change', () => void counter.count++)
  return counter
}

describe('the returned disposer', () => {
  test.each(REGISTRATIONS)('%s returns the exact Cordis effect disposer of the calling fiber', async (label, register) => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    const dispose = register(scopes.agent.ctx.systemPrompt, 'x')
    const meta = effectMetaOf(dispose)
    expect(meta?.label).toBe(label)
    expect(scopes.agent.ctx.fiber.getEffects()).toContain(meta)
  })

  test.each(REGISTRATIONS)('%s through the root context is owned by the root fiber', async (label, register) => {
    const app = await mount(BARE)
    const meta = effectMetaOf(register(app.systemPrompt, 'x'))
    expect(meta?.label).toBe(label)
    expect(app.fiber.getEffects()).toContain(meta)
  })

  test('calling the section disposer removes the section', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.section({ name: 'b', order: 0, text: 'B' })
    await dispose()
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['b'])
  })

  test('calling the context disposer removes the context', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.context({ name: 'a', order: 0, text: 'A' })
    await dispose()
    expect((await app.systemPrompt.prepare()).contexts).toEqual([])
  })

  test('calling the variable disposer removes the variable', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.variable('cwd', '/work')
    await dispose()
    expect((await app.systemPrompt.prepare()).variables).toEqual({})
  })

  test('calling the tools disposer removes that provider only', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    app.systemPrompt.tools(() => ({ schemas: [tool('read')] }))
    await dispose()
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['read'])
  })

  test('calling the suppressor disposer lifts the suppression', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    const dispose = app.systemPrompt.suppressRuntimeContext()
    expect((await app.systemPrompt.prepare()).contexts).toEqual([])
    await dispose()
    expect((await app.systemPrompt.prepare()).contexts).toEqual([{ name: 'date', text: 'today', registered: true }])
  })

  test('suppressors are independent: disposing one leaves another in force', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    const first = app.systemPrompt.suppressRuntimeContext()
    app.systemPrompt.suppressRuntimeContext()
    await first()
    expect((await app.systemPrompt.prepare()).contexts).toEqual([])
  })

  test('equal tool providers are independent registrations', async () => {
    const app = await mount(BARE)
    const provider = () => ({ schemas: [tool('bash')] })
    const first = app.systemPrompt.tools(provider)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.tools(provider)
    await first()
    expect(app.systemPrompt.inspect(keys.agent).tools).toEqual([{ layer: keys.agent, index: 0 }])
  })

  test('calling a disposer twice is harmless', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    await dispose()
    await dispose()
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([])
  })

  test('a stale disposer never removes a later registration of the same name', async () => {
    const app = await mount(BARE)
    const stale = app.systemPrompt.section({ name: 'a', order: 0, text: 'first' })
    await stale()
    app.systemPrompt.section({ name: 'a', order: 0, text: 'second' })
    await stale()
    expect(ownSections(await app.systemPrompt.assemble())).toStrictEqual([{ name: 'a', order: 0, text: 'second' }])
  })

  test('a disposed name can be registered again in the same layer', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.variable('cwd', '/a')
    await dispose()
    expect(() => app.systemPrompt.variable('cwd', '/b')).not.toThrow()
  })

  test('the disposer removes a scoped entry and uncovers the global one it shadowed', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: 'global' })
    const dispose = scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    await dispose()
    expect(ownSections(await app.systemPrompt.assemble({ scope: keys.agent }))[0]!.text).toBe('global')
  })
})

describe('disposal with the owning fiber', () => {
  test('scope.dispose() removes every kind of registration made through the scope', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    const sp = scopes.agent.ctx.systemPrompt
    sp.section({ name: 's', order: 0, text: 'S' })
    sp.context({ name: 'c', order: 0, text: 'C' })
    sp.variable('v', 'V')
    sp.tools(() => ({ schemas: [tool('bash')] }))
    sp.suppressRuntimeContext()
    await scopes.agent.dispose()
    const assembly = await app.systemPrompt.assemble({ scope: keys.agent })
    expect({ ...assembly, sections: ownSections(assembly) }).toEqual({
      sections: [],
      contexts: [{ name: 'date', text: 'today', registered: true }],
      variables: {},
      tools: [],
    })
  })

  test('scope.dispose() leaves the inspection of the scope equal to the global one', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
    scopes.agent.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    await scopes.agent.dispose()
    await scopes.preset.dispose()
    expect(app.systemPrompt.inspect(keys.agent)).toEqual(app.systemPrompt.inspect())
  })

  test('scope.rawDispose() removes the registrations too', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
    await scopes.agent.rawDispose()
    expect(ownSections(await app.systemPrompt.assemble({ scope: keys.agent }))).toEqual([])
  })

  test('disposing a scope leaves its sibling and parent registrations alone', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.preset.ctx.systemPrompt.section({ name: 'p', order: 0, text: 'P' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'x', order: 1, text: 'X' })
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 2, text: 'A' })
    await scopes.agent.dispose()
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: keys.agent2 })))).toEqual(['p', 'x'])
  })

  test('unloading a plugin removes what it registered', async () => {
    const app = await mount(BARE)
    const fiber = await app.inject(['systemPrompt'], (ctx) => {
      ctx.systemPrompt.section({ name: 'plugin', order: 0, text: 'from plugin' })
      ctx.systemPrompt.variable('cwd', '/plugin')
      ctx.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    })
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['plugin'])
    await fiber.dispose()
    const assembly = await app.systemPrompt.assemble()
    expect([ownSections(assembly), assembly.variables, assembly.tools]).toEqual([[], {}, []])
  })

  test('a plugin loaded under a scope registers into that scope and unloads with it', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    await scopes.agent.ctx.inject(['systemPrompt'], (ctx) => {
      ctx.systemPrompt.section({ name: 'plugin', order: 0, text: 'P' })
    })
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: keys.agent })))).toEqual(['plugin'])
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([])
    await scopes.agent.dispose()
    expect(ownSections(await app.systemPrompt.assemble({ scope: keys.agent }))).toEqual([])
  })

  test('disposing a parent scope removes what its nested scope registered (fiber ownership)', async () => {
    const app = await mount(BARE)
    const outerKey = { name: 'outer' }
    const outer = await mintScope(app, outerKey)
    const innerKey = { name: 'inner' }
    let inner!: Scope
    await outer.ctx.inject(['systemPrompt'], (ctx) => {
      inner = createScope(ctx, innerKey, { parent: outerKey })
    })
    inner.ctx.systemPrompt.section({ name: 'inner', order: 0, text: 'I' })
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: innerKey })))).toEqual(['inner'])
    await outer.dispose()
    expect(ownSections(await app.systemPrompt.assemble({ scope: innerKey }))).toEqual([])
  })
})

describe('validation', () => {
  test.each([NaN, Infinity, -Infinity])('a section order of %s is a TypeError', async (order) => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.section({ name: 'a', order, text: 'x' })).toThrow(TypeError)
    expect(() => app.systemPrompt.section({ name: 'a', order, text: 'x' })).toThrow('order must be a finite number')
  })

  test.each([NaN, Infinity, -Infinity])('a context order of %s is a TypeError', async (order) => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.context({ name: 'c', order, text: 'x' })).toThrow(TypeError)
    expect(() => app.systemPrompt.context({ name: 'c', order, text: 'x' })).toThrow('order must be a finite number')
  })

  test('a non-number order names the entry', async () => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.section({ name: 'a', order: '1' as never, text: 'x' })).toThrow(
      'prompt section "a" order must be a finite number',
    )
  })

  test('the order error names the scope of a scoped entry', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    expect(() => scopes.agent.ctx.systemPrompt.section({ name: 'a', order: NaN, text: 'x' })).toThrow(
      'prompt section "a" in scope "agent" order must be a finite number (got number NaN)',
    )
  })

  test('a duplicate global section name is "already registered"', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    expect(() => app.systemPrompt.section({ name: 'a', order: 1, text: 'again' })).toThrow(
      'prompt section "a" is already registered in the global layer',
    )
  })

  test('a duplicate scoped context name is "already registered" in that scope', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    expect(() => scopes.agent.ctx.systemPrompt.context({ name: 'c', order: 0, text: 'again' })).toThrow(
      'runtime context "c" is already registered in scope "agent"',
    )
  })

  test('a duplicate variable name is "already registered"', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('cwd', '/a')
    expect(() => app.systemPrompt.variable('cwd', '/b')).toThrow('prompt variable "cwd" is already registered')
  })

  test('a duplicate through two contexts of the same scope is still a duplicate', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const derived = scopes.agent.ctx.extend({})
    expect(() => derived.systemPrompt.section({ name: 'a', order: 0, text: 'A' })).toThrow('already registered')
  })

  test('a section and a context may share a name', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'S' })
    expect(() => app.systemPrompt.context({ name: 'a', order: 0, text: 'C' })).not.toThrow()
  })

  test('each layer of the chain may register the same name', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: 'global' })
    scopes.preset.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'preset' })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    scopes.sub.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'sub' })
    expect(app.systemPrompt.inspect(keys.sub).sections.find((entry) => entry.name === 'who')).toEqual({
      name: 'who',
      layer: keys.sub,
      shadows: ['global', keys.preset, keys.agent],
    })
  })

  test.each(['Cwd', '1cwd', '_cwd', 'cwd-dir', 'cwd dir', '', 'café', 'constructor!'])(
    'the variable name %j is an "invalid prompt variable name" TypeError',
    async (name) => {
      const app = await mount(BARE)
      expect(() => app.systemPrompt.variable(name, 'x')).toThrow(TypeError)
      expect(() => app.systemPrompt.variable(name, 'x')).toThrow('invalid prompt variable name')
    },
  )

  test.each(['a', 'cwd', 'x1', 'snake_case_2', 'constructor'])('the variable name %j is valid', async (name) => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.variable(name, 'x')).not.toThrow()
  })

  test.each<[string, unknown]>([
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { value: 'x' }],
    ['an array', ['x']],
  ])('a section text that is %s is a TypeError naming the section', async (_, text) => {
    const app = await mount(BARE)
    const register = () => app.systemPrompt.section({ name: 'intro', order: 0, text: text as never })
    expect(register).toThrow(TypeError)
    expect(register).toThrow('prompt section "intro" text must be a string, a signal or a function')
  })

  test('a context text that is not a string, signal or function is a TypeError naming the context', async () => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.context({ name: 'env', order: 0, text: 7 as never })).toThrow(
      new TypeError('runtime context "env" text must be a string, a signal or a function (got number 7)'),
    )
  })

  test('a variable value that is not a string, signal or function is a TypeError naming the variable', async () => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.variable('cwd', 42 as never)).toThrow(
      new TypeError('prompt variable "cwd" value must be a string, a signal or a function (got number 42)'),
    )
  })

  test('a scoped entry with a bad text is named with its scope', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    expect(() => scopes.sub.ctx.systemPrompt.section({ name: 'x', order: 0, text: {} as never })).toThrow(
      'prompt section "x" in scope "sub-agent" text',
    )
  })

  test('a tool provider that is neither a function nor a signal is a TypeError mentioning the tool provider', async () => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.tools({ schemas: [] } as never)).toThrow(TypeError)
    expect(() => app.systemPrompt.tools({ schemas: [] } as never)).toThrow('tool provider')
  })

  test('string, signal, computed and function texts are all accepted', async () => {
    const app = await mount(BARE)
    const base = signal('sig')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'str' })
    app.systemPrompt.section({ name: 'b', order: 1, text: base })
    app.systemPrompt.section({ name: 'c', order: 2, text: computed(() => `${base.value}+`) })
    app.systemPrompt.section({ name: 'd', order: 3, text: () => 'fn' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('str\n\nsig\n\nsig+\n\nfn')
  })

  test('a non-boolean interpolate option is a TypeError naming the entry', async () => {
    const app = await mount(BARE)
    expect(() => app.systemPrompt.section({ name: 'a', order: 0, text: 'x', interpolate: 'no' as never })).toThrow(
      'prompt section "a" option "interpolate" must be a boolean',
    )
  })
})

describe('a failed registration leaves no trace', () => {
  const FAILURES: [string, (sp: SystemPrompt) => unknown][] = [
    ['a duplicate section', (sp) => sp.section({ name: 'taken', order: 0, text: 'again' })],
    ['a duplicate context', (sp) => sp.context({ name: 'ctx', order: 0, text: 'again' })],
    ['a duplicate variable', (sp) => sp.variable('v', 'again')],
    ['a non-finite order', (sp) => sp.section({ name: 'fresh', order: NaN, text: 'x' })],
    ['a bad text', (sp) => sp.section({ name: 'fresh', order: 0, text: 1 as never })],
    ['an invalid variable name', (sp) => sp.variable('Bad', 'x')],
    ['a bad tool provider', (sp) => sp.tools(null as never)],
  ]

  async function seeded() {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    for (const sp of [app.systemPrompt, scopes.agent.ctx.systemPrompt]) {
      sp.section({ name: 'taken', order: 0, text: 'T {{v}}' })
      sp.context({ name: 'ctx', order: 0, text: 'C' })
      sp.variable('v', 'V')
    }
    return { app, keys, scopes }
  }

  test.each(FAILURES)('%s in the global layer changes no inspection and no assembly', async (_, fail) => {
    const { app, keys } = await seeded()
    const before = [await observe(app), await observe(app, keys.sub)]
    expect(() => fail(app.systemPrompt)).toThrow()
    expect([await observe(app), await observe(app, keys.sub)]).toEqual(before)
  })

  test.each(FAILURES)('%s in a scope changes no inspection and no assembly', async (_, fail) => {
    const { app, keys, scopes } = await seeded()
    const before = await observe(app, keys.sub)
    expect(() => fail(scopes.agent.ctx.systemPrompt)).toThrow()
    expect(await observe(app, keys.sub)).toEqual(before)
  })

  test.each(FAILURES)('%s emits no change event', async (_, fail) => {
    const { app, scopes } = await seeded()
    const changes = countChanges(app)
    const stats = app.systemPrompt.stats()
    expect(() => fail(app.systemPrompt)).toThrow()
    expect(() => fail(scopes.agent.ctx.systemPrompt)).toThrow()
    expect(changes.count).toBe(0)
    expect(app.systemPrompt.stats().changeEvents).toBe(stats.changeEvents)
  })

  test.each(FAILURES.filter(([what]) => !what.startsWith('a duplicate')))(
    '%s in a scope without a layer creates no layer',
    async (_, fail) => {
      const { app, keys, scopes } = await seeded()
      const before = await observe(app, keys.agent2)
      const recomputes = app.systemPrompt.stats().structureRecomputes
      expect(() => fail(scopes.agent2.ctx.systemPrompt)).toThrow()
      expect(await observe(app, keys.agent2)).toEqual(before)
      // A published (even empty) layer would re-derive the scope's view.
      expect(app.systemPrompt.stats().structureRecomputes).toBe(recomputes)
    },
  )

  test('a failed registration adds no Cordis effect to the fiber', async () => {
    const { scopes } = await seeded()
    const before = scopes.agent.ctx.fiber.getEffects()
    expect(() => scopes.agent.ctx.systemPrompt.section({ name: 'taken', order: 0, text: 'x' })).toThrow()
    expect(scopes.agent.ctx.fiber.getEffects()).toEqual(before)
  })

  test('registering through a disposed scope throws and leaves no trace', async () => {
    const { app, keys, scopes } = await seeded()
    await scopes.agent2.dispose()
    const before = await observe(app, keys.agent2)
    const changes = countChanges(app)
    expect(() => scopes.agent2.ctx.systemPrompt.section({ name: 'late', order: 0, text: 'L' })).toThrow()
    expect(await observe(app, keys.agent2)).toEqual(before)
    expect(changes.count).toBe(0)
  })

  test('a service read before its scope was disposed refuses to register (the fiber is inactive)', async () => {
    const { app, keys, scopes } = await seeded()
    const sp = scopes.agent2.ctx.systemPrompt
    await scopes.agent2.dispose()
    const before = await observe(app, keys.agent2)
    const changes = countChanges(app)
    expect(() => sp.section({ name: 'late', order: 0, text: 'L' })).toThrow(/inactive/)
    expect(await observe(app, keys.agent2)).toEqual(before)
    expect(changes.count).toBe(0)
  })

  test('the earlier registration still works after a duplicate was rejected', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'first' })
    expect(() => app.systemPrompt.section({ name: 'a', order: 0, text: 'second' })).toThrow()
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('first')
    await dispose()
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('')
  })

  test('a rejected signal text is not tracked (writing it emits no change)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const text = signal('x')
    expect(() => app.systemPrompt.section({ name: 'a', order: 0, text })).toThrow('already registered')
    const changes = countChanges(app)
    text.value = 'y'
    expect(changes.count).toBe(0)
  })

  test('a scope registration never calls the shadowed global provider', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const global = vi.fn(() => 'global')
    app.systemPrompt.section({ name: 'who', order: 0, text: global })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    await app.systemPrompt.assemble({ scope: keys.sub })
    expect(global).not.toHaveBeenCalled()
  })
})
