import { computed, signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, test, vi } from 'vitest'
import {
  batch,
  bindScopeParent,
  carrierKeyOf,
  isScopeCarrier,
  type AssembleContext,
  type ScopeKey,
} from '../../src/index.js'
import { BARE, family, labelOf, mintScope, mount, names, tool } from './system-prompt.fixtures.js'

/** Records `<listener> hears <scope>` for every waterfall a listener on `ctx` is admitted to. */
function listen(log: string[], label: string, ctx: Context, options?: { global: true }): void {
  ctx.on(
    'system-prompt/prepare',
    async (preparation, context, next) => {
      log.push(`${label} prepare ${labelOf(context.scope)}`)
      return next()
    },
    options,
  )
  ctx.on(
    'system-prompt/assemble',
    async (presentation, context, next) => {
      log.push(`${label} assemble ${labelOf(context.scope)}`)
      return next()
    },
    options,
  )
}

function changes(app: Context): string[] {
  const log: string[] = []
  app.on('system-prompt/change', () => void log.push('change'))
  return log
}

describe('scope-filtered waterfalls', () => {
  test('a scoped listener hears its scope and descendants; an unscoped one hears every assembly', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const log: string[] = []
    listen(log, 'unscoped', app)
    listen(log, 'preset', scopes.preset.ctx)
    listen(log, 'agent', scopes.agent.ctx)
    listen(log, 'sub', scopes.sub.ctx)
    listen(log, 'agent-2', scopes.agent2.ctx)
    for (const scope of [undefined, keys.preset, keys.agent, keys.sub, keys.agent2]) {
      await app.systemPrompt.assemble({ scope })
    }
    expect(log).toEqual([
      'unscoped prepare global',
      'unscoped assemble global',
      'unscoped prepare preset',
      'preset prepare preset',
      'unscoped assemble preset',
      'preset assemble preset',
      'unscoped prepare agent',
      'preset prepare agent',
      'agent prepare agent',
      'unscoped assemble agent',
      'preset assemble agent',
      'agent assemble agent',
      'unscoped prepare sub-agent',
      'preset prepare sub-agent',
      'agent prepare sub-agent',
      'sub prepare sub-agent',
      'unscoped assemble sub-agent',
      'preset assemble sub-agent',
      'agent assemble sub-agent',
      'sub assemble sub-agent',
      'unscoped prepare agent-2',
      'preset prepare agent-2',
      'agent-2 prepare agent-2',
      'unscoped assemble agent-2',
      'preset assemble agent-2',
      'agent-2 assemble agent-2',
    ])
  })

  test('listeners run in registration order, whatever their scope', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const log: string[] = []
    listen(log, 'sub', scopes.sub.ctx)
    listen(log, 'unscoped', app)
    listen(log, 'preset', scopes.preset.ctx)
    await app.systemPrompt.prepare({ scope: keys.sub })
    expect(log).toEqual(['sub prepare sub-agent', 'unscoped prepare sub-agent', 'preset prepare sub-agent'])
  })

  test('a listener registered with { global: true } from a scope hears every assembly (Cordis semantics)', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const log: string[] = []
    listen(log, 'sub (global)', scopes.sub.ctx, { global: true })
    await app.systemPrompt.assemble()
    await app.systemPrompt.assemble({ scope: keys.agent2 })
    expect(log).toEqual([
      'sub (global) prepare global',
      'sub (global) assemble global',
      'sub (global) prepare agent-2',
      'sub (global) assemble agent-2',
    ])
  })

  test('a listener of a plugin loaded under a scope inherits the scope’s filter', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const log: string[] = []
    await scopes.agent.ctx.plugin((ctx: Context) => listen(log, 'plugin', ctx))
    await app.systemPrompt.prepare()
    await app.systemPrompt.prepare({ scope: keys.agent2 })
    await app.systemPrompt.prepare({ scope: keys.sub })
    expect(log).toEqual(['plugin prepare sub-agent'])
  })

  test('a listener sees this as the scope carrier of the assembly', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const seen: [boolean, ScopeKey | undefined][] = []
    app.on('system-prompt/assemble', async function (presentation, context, next) {
      seen.push([isScopeCarrier(this), carrierKeyOf(this)])
      return next()
    })
    await app.systemPrompt.assemble({ scope: keys.agent })
    await app.systemPrompt.assemble()
    expect(seen).toEqual([
      [true, keys.agent],
      [true, undefined],
    ])
  })

  test('listeners receive the caller’s assemble context', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const seen: AssembleContext[] = []
    app.on('system-prompt/prepare', async (preparation, context, next) => (seen.push(context), next()))
    app.on('system-prompt/assemble', async (presentation, context, next) => (seen.push(context), next()))
    const context: AssembleContext = { scope: keys.agent }
    await app.systemPrompt.assemble(context)
    expect(seen).toHaveLength(2)
    expect(seen.every((c) => c === context)).toBe(true)
  })

  test('a listener rebinding the parent moves who hears later assemblies', async () => {
    const app = await mount(BARE)
    const parentA = { name: 'parent-a' }
    const parentB = { name: 'parent-b' }
    const childKey = { name: 'child' }
    const a = await mintScope(app, parentA)
    const b = await mintScope(app, parentB)
    const binding = bindScopeParent(childKey, parentA)
    const log: string[] = []
    listen(log, 'a', a.ctx)
    listen(log, 'b', b.ctx)
    await app.systemPrompt.prepare({ scope: childKey })
    binding.rebind(parentB)
    await app.systemPrompt.prepare({ scope: childKey })
    expect(log).toEqual(['a prepare child', 'b prepare child'])
  })

  test('a disposed scope’s listeners hear nothing', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const log: string[] = []
    listen(log, 'agent', scopes.agent.ctx)
    await scopes.agent.dispose()
    await app.systemPrompt.assemble({ scope: keys.agent })
    expect(log).toEqual([])
  })
})

describe('system-prompt/change', () => {
  test('is emitted synchronously after a registration, once', async () => {
    const app = await mount(BARE)
    const log = changes(app)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    expect(log).toEqual(['change'])
  })

  test.each<[string, (app: Context) => unknown]>([
    ['a section', (app) => app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })],
    ['a context', (app) => app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })],
    ['a variable', (app) => app.systemPrompt.variable('v', 'V')],
    ['a tool provider', (app) => app.systemPrompt.tools(() => ({ schemas: [] }))],
    ['a suppressor', (app) => app.systemPrompt.suppressRuntimeContext()],
  ])('is emitted once for registering %s', async (_, register) => {
    const app = await mount(BARE)
    const log = changes(app)
    register(app)
    expect(log).toHaveLength(1)
  })

  test('with no listener, an internal/dispatch observer still sees each change dispatched, and a listener added later hears the next', async () => {
    const app = await mount(BARE)
    const seen: unknown[] = []
    const stop = app.on('internal/dispatch', (mode, name) => void (name === 'system-prompt/change' && seen.push(mode)))
    const dispose = app.systemPrompt.section({ name: 'a', order: 1, text: 'A' })
    expect(seen).toEqual(['emit'])
    stop()
    const heard = vi.fn()
    app.on('system-prompt/change', heard)
    await dispose()
    expect(heard).toHaveBeenCalledTimes(1)
    expect(seen).toEqual(['emit'])
  })

  test('a listener sees the registry already changed', async () => {
    const app = await mount(BARE)
    const seen: string[][] = []
    app.on('system-prompt/change', () => void seen.push(names(app.systemPrompt.inspect().sections)))
    app.systemPrompt.section({ name: 'a', order: 5, text: 'A' })
    expect(seen).toEqual([['deployment:persona-prefix', 'a', 'deployment:persona-suffix']])
  })

  test('is emitted once for a disposal, after the entry is gone', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 5, text: 'A' })
    const seen: string[][] = []
    app.on('system-prompt/change', () => void seen.push(names(app.systemPrompt.inspect().sections)))
    await dispose()
    expect(seen).toEqual([['deployment:persona-prefix', 'deployment:persona-suffix']])
  })

  test('is emitted for a scoped registration', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    const log = changes(app)
    scopes.sub.ctx.systemPrompt.variable('v', 'V')
    expect(log).toEqual(['change'])
  })

  test('is emitted when a scope is disposed, and the scope’s entries are gone by the last event', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    scopes.agent.ctx.systemPrompt.variable('v', 'V')
    const seen: number[] = []
    app.on('system-prompt/change', () => {
      const inspection = app.systemPrompt.inspect(keys.agent)
      seen.push(inspection.sections.length + inspection.variables.length)
    })
    await scopes.agent.dispose()
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.at(-1)).toBe(2)
  })

  test('disposing an empty scope emits nothing', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    const log = changes(app)
    await scopes.agent2.dispose()
    expect(log).toEqual([])
  })

  test('is emitted once for a parent rebind', async () => {
    const app = await mount(BARE)
    const binding = bindScopeParent({ name: 'child' }, { name: 'p1' })
    const log = changes(app)
    binding.rebind({ name: 'p2' })
    expect(log).toEqual(['change'])
  })

  test('a rebind to the same parent emits nothing', async () => {
    const app = await mount(BARE)
    const parent = { name: 'p' }
    const binding = bindScopeParent({ name: 'child' }, parent)
    const log = changes(app)
    binding.rebind(parent)
    expect(log).toEqual([])
  })

  test('is emitted once for a new value of a signal text, variable or tool provider', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    const value = signal<string | undefined>('v')
    const tools = signal({ schemas: [tool('a')] })
    app.systemPrompt.section({ name: 's', order: 0, text })
    app.systemPrompt.context({ name: 'c', order: 0, text: computed(() => `${text.value}!`) })
    app.systemPrompt.variable('v', value)
    app.systemPrompt.tools(tools)
    const log = changes(app)
    text.value = 'b'
    expect(log).toHaveLength(1)
    value.value = undefined
    expect(log).toHaveLength(2)
    tools.value = { schemas: [] }
    expect(log).toHaveLength(3)
  })

  test('writing an equal value to a signal input emits nothing', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    app.systemPrompt.section({ name: 's', order: 0, text })
    const log = changes(app)
    text.value = 'a'
    expect(log).toEqual([])
  })

  test('a signal of a disposed registration no longer emits', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    const dispose = app.systemPrompt.section({ name: 's', order: 0, text })
    await dispose()
    const log = changes(app)
    text.value = 'b'
    expect(log).toEqual([])
  })

  test('a signal shared by two registrations still emits while one of them lives', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    const first = app.systemPrompt.section({ name: 's1', order: 0, text })
    const second = app.systemPrompt.section({ name: 's2', order: 0, text })
    await first()
    const log = changes(app)
    text.value = 'b'
    expect(log).toHaveLength(1)
    await second()
    text.value = 'c'
    expect(log).toHaveLength(2)
  })

  test('a signal that is not a registered input emits nothing', async () => {
    const app = await mount(BARE)
    const unrelated = signal(0)
    app.systemPrompt.section({ name: 's', order: 0, text: () => String(unrelated.value) })
    const log = changes(app)
    unrelated.value = 1
    expect(log).toEqual([])
  })

  test('is emitted exactly once per batch() of changes', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    const { scopes } = await family(app)
    app.systemPrompt.section({ name: 's', order: 0, text })
    const log = changes(app)
    batch(() => {
      app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
      scopes.agent.ctx.systemPrompt.variable('v', 'V')
      app.systemPrompt.suppressRuntimeContext()
      text.value = 'b'
      expect(log).toEqual([])
    })
    expect(log).toEqual(['change'])
  })

  test('is emitted once at the end of the outermost of nested batches', async () => {
    const app = await mount(BARE)
    const log = changes(app)
    batch(() => {
      batch(() => {
        app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
      })
      expect(log).toEqual([])
      app.systemPrompt.section({ name: 'b', order: 0, text: 'B' })
    })
    expect(log).toEqual(['change'])
  })

  test('a batch that registers and disposes emits once', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const log = changes(app)
    batch(() => {
      void dispose()
      app.systemPrompt.section({ name: 'b', order: 0, text: 'B' })
    })
    expect(log).toEqual(['change'])
  })

  test('is never emitted for a failed registration', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const log = changes(app)
    expect(() => app.systemPrompt.section({ name: 'a', order: 0, text: 'again' })).toThrow()
    expect(() => app.systemPrompt.context({ name: 'c', order: NaN, text: 'x' })).toThrow()
    expect(() => app.systemPrompt.variable('Bad', 'x')).toThrow()
    expect(() => app.systemPrompt.tools(42 as never)).toThrow()
    expect(log).toEqual([])
  })

  test('a failed registration inside a batch does not add an event', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const log = changes(app)
    batch(() => {
      expect(() => app.systemPrompt.section({ name: 'a', order: 0, text: 'again' })).toThrow()
    })
    expect(log).toEqual([])
  })

  test('assembling and rendering emit nothing', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: signal('A') })
    const log = changes(app)
    await app.systemPrompt.assemble()
    await app.systemPrompt.prepare()
    app.systemPrompt.inspect()
    expect(log).toEqual([])
  })

  test('a throwing change listener does not throw at the writer', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    app.systemPrompt.section({ name: 's', order: 0, text })
    const listener = vi.fn(() => {
      throw new Error('listener failed')
    })
    app.on('system-prompt/change', listener)
    expect(() => app.systemPrompt.section({ name: 'b', order: 0, text: 'B' })).not.toThrow()
    expect(() => {
      text.value = 'b'
    }).not.toThrow()
    expect(listener).toHaveBeenCalledTimes(2)
  })

  test('a throwing change listener does not stop later change events', async () => {
    const app = await mount(BARE)
    let fail = true
    const heard: string[] = []
    app.on('system-prompt/change', () => {
      heard.push('change')
      if (fail) throw new Error('listener failed')
    })
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    fail = false
    app.systemPrompt.section({ name: 'b', order: 0, text: 'B' })
    expect(heard).toEqual(['change', 'change'])
  })

  test('a throwing change listener does not keep the listeners after it from hearing the event', async () => {
    const app = await mount(BARE)
    const heard: string[] = []
    app.on('system-prompt/change', () => {
      heard.push('first')
      throw new Error('listener failed')
    })
    app.on('system-prompt/change', () => void heard.push('second'))
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    expect(heard).toEqual(['first', 'second'])
  })

  test('writing a signal whose derived text throws does not throw at the writer', async () => {
    const app = await mount(BARE)
    const base = signal(1)
    const text = computed(() => {
      if (base.value > 1) throw new Error('derivation failed')
      return 'ok'
    })
    app.systemPrompt.section({ name: 's', order: 0, text })
    const log = changes(app)
    expect(() => {
      base.value = 2
    }).not.toThrow()
    expect(log).toEqual(['change'])
    await expect(app.systemPrompt.assemble()).rejects.toThrow('derivation failed')
    base.value = 1
    expect((await app.systemPrompt.assemble()).sections.find((s) => s.name === 's')?.text).toBe('ok')
  })

  test('is unfiltered: a listener registered through a scope hears changes anywhere', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    const heard: string[] = []
    scopes.sub.ctx.on('system-prompt/change', () => void heard.push('change'))
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'b', order: 0, text: 'B' })
    expect(heard).toEqual(['change', 'change'])
  })

  test('stops when the service unloads', async () => {
    const app = new Context()
    const { SystemPrompt } = await import('../../src/index.js')
    const fiber = await app.plugin(SystemPrompt, BARE)
    const text = signal('a')
    app.systemPrompt.section({ name: 's', order: 0, text })
    const log = changes(app)
    await fiber.dispose()
    text.value = 'b'
    expect(log).toEqual([])
  })
})
