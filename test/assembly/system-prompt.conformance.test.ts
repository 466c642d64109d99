import { Context } from 'cordis'
import { describe, expect, expectTypeOf, test, vi } from 'vitest'
import {
  assembleContextFor,
  createScope,
  renderContextSnapshot,
  renderPrompt,
  SECTION_ORDERS,
  SystemPrompt,
  type AssembleContext,
  type AssembledSection,
  type PromptAssembly,
  type ToolSchema,
} from '../../src/index.js'
import { BARE, mintScope, mount, names, ownSections, tool } from './system-prompt.fixtures.js'

// Conformance fixes of issue #10 (part B): a disposed service, tools renamed in
// place, listener results, config templates, opaque scope keys, the order
// bands, the result and disposer types, and assembleContextFor.

describe('a disposed service', () => {
  async function disposedService() {
    const app = new Context()
    const fiber = app.plugin(SystemPrompt, BARE)
    await fiber
    const service = app.systemPrompt
    await fiber.dispose()
    return { app, service }
  }

  test('refuses a registration once its plugin is disposed ("is disposed")', async () => {
    const { service } = await disposedService()
    expect(() => service.section({ name: 'late', order: 0, text: 'L' })).toThrowError(/systemPrompt.*is disposed; /)
    expect(() => service.context({ name: 'late', order: 0, text: 'L' })).toThrowError(/is disposed; /)
    expect(() => service.variable('late', 'L')).toThrowError(/is disposed; /)
    expect(() => service.tools(() => ({ schemas: [] }))).toThrowError(/is disposed; /)
    expect(() => service.suppressRuntimeContext()).toThrowError(/is disposed; /)
  })

  test('refuses prepare, assemble and refreshContext once its plugin is disposed, in the same words', async () => {
    const { service } = await disposedService()
    const accepted = { variables: {}, contexts: [] }
    await expect(service.prepare()).rejects.toThrowError(/^prepare\(\) cannot run: this "systemPrompt" service is disposed; /)
    await expect(service.assemble()).rejects.toThrowError(/^assemble\(\) cannot run: this "systemPrompt" service is disposed; /)
    await expect(service.assemble({}, accepted)).rejects.toThrowError(/^assemble\(\) cannot run: .* is disposed; /)
    expect(() => service.refreshContext(accepted)).toThrowError(/^refreshContext\(\) cannot run: .* is disposed; /)
  })

  test.each(['system-prompt/prepare', 'system-prompt/assemble'] as const)(
    'an assembly waiting in the %s waterfall while the plugin unloads rejects',
    async (event) => {
      const app = new Context()
      const fiber = app.plugin(SystemPrompt, { identity: 'You are Loom.' })
      await fiber
      const service = app.systemPrompt
      service.section({ name: 'root-owned', order: 1, text: 'registered by the root' })
      let release!: () => void
      const gate = new Promise<void>((resolve) => (release = resolve))
      app.on(event, async (value: never, context: never, next: () => Promise<never>) => {
        await gate
        return next()
      })
      const prepared = event === 'system-prompt/prepare' ? service.prepare() : Promise.resolve(undefined)
      const inflight = service.assemble()
      await fiber.dispose()
      release()
      await expect(inflight).rejects.toThrowError(/^assemble\(\) cannot run: .* is disposed; /)
      if (event === 'system-prompt/prepare') await expect(prepared).rejects.toThrowError(/^prepare\(\) cannot run: /)
    },
  )

  test('a refused registration leaves no effect on the caller', async () => {
    const { app, service } = await disposedService()
    const before = app.fiber.getEffects().length
    expect(() => service.section({ name: 'late', order: 0, text: 'L' })).toThrow(Error)
    expect(app.fiber.getEffects().length).toBe(before)
  })
})

describe('tools renamed in place', () => {
  function mutable(name: string): { -readonly [K in keyof ToolSchema]: ToolSchema[K] } {
    return { ...tool(name) }
  }

  test('a schema renamed in place by its provider is ordered and detached under its new name', async () => {
    const app = await mount(BARE)
    const a = mutable('alpha')
    const b = mutable('beta')
    const result = { schemas: [a, b] }
    app.systemPrompt.tools(() => result)
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['alpha', 'beta'])
    a.name = 'zeta'
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['beta', 'zeta'])
  })

  test('a schema renamed in place to another tool’s name fails as a duplicate', async () => {
    const app = await mount(BARE)
    const a = mutable('alpha')
    const result = { schemas: [a, mutable('beta')] }
    app.systemPrompt.tools(() => result)
    await app.systemPrompt.assemble()
    a.name = 'beta'
    await expect(app.systemPrompt.assemble()).rejects.toThrowError('tool "beta" is provided more than once')
  })

  test('a new description or parameters object in place is re-detached', async () => {
    const app = await mount(BARE)
    const a = mutable('alpha')
    const result = { schemas: [a] }
    app.systemPrompt.tools(() => result)
    await app.systemPrompt.assemble()
    a.description = 'changed'
    a.parameters = { type: 'object' }
    expect((await app.systemPrompt.assemble()).tools).toEqual([{ name: 'alpha', description: 'changed', parameters: { type: 'object' } }])
  })
})

describe('listener results are validated', () => {
  test('an assemble listener returning a null section fails, naming the event and the index', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const result = await next()
      return { ...result, sections: [...result.sections, null as never] }
    })
    await expect(app.systemPrompt.assemble()).rejects.toThrowError(
      'a "system-prompt/assemble" listener returned sections[2] = null; every section needs a string name and text',
    )
  })

  test('an assemble listener returning a context without text fails', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const result = await next()
      return { ...result, contexts: [{ name: 'x' } as never] }
    })
    await expect(app.systemPrompt.assemble()).rejects.toThrowError(
      /a "system-prompt\/assemble" listener returned contexts\[0\] = .*; every context needs a string name and text/,
    )
  })

  test('a prepare listener returning an undefined context fails', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { ...result, contexts: [undefined as never] }
    })
    await expect(app.systemPrompt.prepare()).rejects.toThrowError(
      'a "system-prompt/prepare" listener returned contexts[0] = undefined; every context needs a string name and text',
    )
  })

  test('a listener returning a non-string variable value fails, naming the variable (it used to render "[object Object]")', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('cwd', '/w')
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { ...result, variables: { ...result.variables, cwd: { path: '/x' } as never } }
    })
    await expect(app.systemPrompt.prepare()).rejects.toThrowError(
      'a "system-prompt/prepare" listener returned variables.cwd = an object; every variable value must be a string or undefined',
    )
  })

  test('an assemble listener setting a variable to null or a number fails; undefined stays "no value"', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'on {{branch}}' })
    let value: unknown = null
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const result = await next()
      return { ...result, variables: { ...result.variables, branch: value as never } }
    })
    await expect(app.systemPrompt.assemble()).rejects.toThrowError(
      'a "system-prompt/assemble" listener returned variables.branch = null; every variable value must be a string or undefined',
    )
    value = 42
    await expect(app.systemPrompt.assemble()).rejects.toThrowError('listener returned variables.branch = number 42;')
    value = undefined
    await expect(app.systemPrompt.assemble().then(renderPrompt)).rejects.toThrowError('prompt variable "branch" has no value in prompt section "a"')
  })
})

describe('config templates', () => {
  for (const key of ['identity', 'personaPrefix', 'personaSuffix'] as const) {
    test(`a malformed reference in config ${key} fails at load, naming the key`, async () => {
      const app = new Context()
      await expect(app.plugin(SystemPrompt, { [key]: 'Team {{ team }}' })).rejects.toThrowError(
        new RegExp(`malformed prompt variable reference "\\{\\{ team \\}\\}" in systemPrompt config "${key}"`),
      )
    })
  }

  test('a well-formed config template still loads', async () => {
    const app = await mount({ personaPrefix: 'Team {{team}}' })
    app.systemPrompt.variable('team', 'blue')
    expect(renderPrompt(await app.systemPrompt.assemble())).toContain('Team blue')
  })
})

describe('opaque scope keys', () => {
  /** A key whose every property read throws, like a locked-down agent proxy. */
  function hostileKey(): object {
    return new Proxy(
      {},
      {
        get() {
          throw new Error('no property reads on this key')
        },
        has() {
          throw new Error('no property checks on this key')
        },
      },
    )
  }

  test('a Proxy key whose property reads throw registers, assembles and renders', async () => {
    const app = await mount(BARE)
    const key = hostileKey()
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S {{v}}' })
    scope.ctx.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    scope.ctx.systemPrompt.variable('v', 'V')
    scope.ctx.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    const assembly = await app.systemPrompt.assemble({ scope: key })
    expect(renderPrompt(assembly)).toBe('S V')
    expect(renderContextSnapshot(assembly)).toContain('C')
    expect(names(assembly.tools)).toEqual(['bash'])
  })

  test('a class key registers, assembles, inspects and diagnoses like an object key', async () => {
    const app = await mount(BARE)
    class Agent {}
    const scope = await mintScope(app, Agent)
    scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: Agent }))).toBe('S')
    expect(app.systemPrompt.inspect(Agent).sections.map((s) => s.name)).toContain('s')
    expect(app.systemPrompt.diagnostics(Agent)).toEqual([])
  })

  test('a revoked Proxy key registers, assembles and renders', async () => {
    const app = await mount(BARE)
    const { proxy, revoke } = Proxy.revocable({}, {})
    const scope = await mintScope(app, proxy)
    revoke()
    scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: proxy }))).toBe('S')
  })

  test('an error about a hostile key falls back to its serial label', async () => {
    const app = await mount(BARE)
    const key = hostileKey()
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
    expect(() => scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'again' })).toThrowError(
      /prompt section "s" is already registered in scope "scope#\d+"/,
    )
  })
})

describe('order bands', () => {
  test('the section table holds the upstream harness bands', async () => {
    const app = await mount(BARE)
    expect(SECTION_ORDERS).toMatchObject({ TEAM_POLICY: 600, TOOL_BASH: 1000, TOOL_REPORT: 2900, DELIVERABLE_FILE_REFERENCES: 9000 })
    expect(app.systemPrompt.getSectionOrder('TOOL_WEB_FETCH')).toBe(2100)
  })

  test('config sectionOrders and contextOrders add named bands the getters accept', async () => {
    const app = await mount({ ...BARE, sectionOrders: { DEPLOY_NOTES: 4200 }, contextOrders: { TICKET: 130 } })
    expect(app.systemPrompt.getSectionOrder('DEPLOY_NOTES')).toBe(4200)
    expect(app.systemPrompt.getContextOrder('TICKET')).toBe(130)
  })

  test('an unknown band name throws a TypeError listing the configured names too', async () => {
    const app = await mount({ ...BARE, sectionOrders: { DEPLOY_NOTES: 4200 } })
    expect(() => app.systemPrompt.getSectionOrder('NOPE')).toThrowError(TypeError)
    expect(() => app.systemPrompt.getSectionOrder('NOPE')).toThrowError(/unknown section order "NOPE"; known: .*DEPLOY_NOTES/)
    expect(() => app.systemPrompt.getContextOrder('DEPLOY_NOTES')).toThrowError(/unknown context order "DEPLOY_NOTES"/)
  })

  test('a configured band that redefines a built-in band fails at load', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { sectionOrders: { TOOLS_SDK: 1 } })).rejects.toThrowError(
      /sectionOrders "TOOLS_SDK" is already a section order band/,
    )
  })

  test('a configured band with a non-finite order fails at load', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { contextOrders: { TICKET: NaN } })).rejects.toThrowError(
      /contextOrders "TICKET" must be a finite number \(got number NaN\)/,
    )
  })
})

describe('result and disposer types', () => {
  test('a listener may return sections without an order, kept in the order returned', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const result = await next()
      const plain: AssembledSection[] = [{ name: 'z', text: 'Z' }, { name: 'a', text: 'A' }]
      return { ...result, sections: plain }
    })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.sections).toEqual([{ name: 'z', text: 'Z' }, { name: 'a', text: 'A' }])
    expect(renderPrompt(assembly)).toBe('Z\n\nA')
  })

  test('AssembledSection.order is optional', () => {
    expectTypeOf<{ name: string; text: string }>().toMatchTypeOf<AssembledSection>()
  })

  test('a registration disposer is typed as what it returns (undefined for a synchronous effect)', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    expectTypeOf(dispose).toEqualTypeOf<() => Promise<void> | undefined>()
    expect(dispose()).toBeUndefined()
    await expect(Promise.resolve(dispose())).resolves.toBeUndefined()
  })
})

describe('assembleContextFor', () => {
  test('builds { agent, scope: agent, signal }', () => {
    const agent = { name: 'agent-1' }
    const signal = new AbortController().signal
    expect(assembleContextFor(agent, signal)).toEqual({ agent, scope: agent, signal })
    expect(assembleContextFor(agent).scope).toBe(agent)
  })

  test('assembles the agent’s scope and hands providers context.agent', async () => {
    const app = await mount(BARE)
    const agent = { name: 'agent-1' }
    let scope!: ReturnType<typeof createScope>
    await app.inject(['systemPrompt'], (ctx) => void (scope = createScope(ctx, agent)))
    const seen = vi.fn((context: AssembleContext) => (context.agent === agent ? 'mine' : 'other'))
    scope.ctx.systemPrompt.section({ name: 's', order: 0, text: seen })
    const assembly: PromptAssembly = await app.systemPrompt.assemble(assembleContextFor(agent))
    expect(ownSections(assembly)).toEqual([{ name: 's', order: 0, text: 'mine' }])
    expectTypeOf(assembleContextFor(agent).agent).toEqualTypeOf<{ name: string }>()
  })
})
