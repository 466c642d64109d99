import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import { bindScopeParent, render, type AssembleContext, type PromptPreparation } from '../../src/index.js'
import { BARE, family, mintScope, mount, names, ownSections, tool } from './system-prompt.fixtures.js'

describe('prepare', () => {
  test('reads no section and no tool provider', async () => {
    const app = await mount(BARE)
    const section = vi.fn(() => 'S')
    const tools = vi.fn(() => ({ schemas: [tool('bash')] }))
    app.systemPrompt.section({ name: 's', order: 0, text: section })
    app.systemPrompt.tools(tools)
    app.systemPrompt.variable('v', 'V')
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    expect(await app.systemPrompt.prepare()).toEqual({ variables: { v: 'V' }, contexts: [{ name: 'c', text: 'C', registered: true }] })
    expect(section).not.toHaveBeenCalled()
    expect(tools).not.toHaveBeenCalled()
  })

  test('resolves string, signal and function variables', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('a', 'str')
    app.systemPrompt.variable('b', signal<string | undefined>('sig'))
    app.systemPrompt.variable('c', () => 'fn')
    expect((await app.systemPrompt.prepare()).variables).toEqual({ a: 'str', b: 'sig', c: 'fn' })
  })

  test('keeps a variable whose provider yields undefined as an own key without a value', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('later', () => undefined)
    app.systemPrompt.variable('gone', signal<string | undefined>(undefined))
    const { variables } = await app.systemPrompt.prepare()
    expect(Object.keys(variables).sort()).toEqual(['gone', 'later'])
    expect(variables).toStrictEqual({ later: undefined, gone: undefined })
  })

  test('passes the assemble context to function providers', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const provider = vi.fn((context: AssembleContext) => labelOfContext(context))
    app.systemPrompt.variable('who', provider)
    const context = { scope: keys.agent, extra: 'field' } as AssembleContext
    expect((await app.systemPrompt.prepare(context)).variables).toEqual({ who: 'agent' })
    expect(provider).toHaveBeenCalledWith(context)
  })

  test('scoped variables shadow global ones along the chain', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.variable('cwd', '/')
    app.systemPrompt.variable('user', 'root')
    scopes.preset.ctx.systemPrompt.variable('cwd', '/preset')
    scopes.agent.ctx.systemPrompt.variable('cwd', () => '/agent')
    expect((await app.systemPrompt.prepare({ scope: keys.sub })).variables).toEqual({ cwd: '/agent', user: 'root' })
    expect((await app.systemPrompt.prepare({ scope: keys.agent2 })).variables).toEqual({ cwd: '/preset', user: 'root' })
    expect((await app.systemPrompt.prepare()).variables).toEqual({ cwd: '/', user: 'root' })
  })

  test('sorts contexts by order, then by code-unit name', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.context({ name: 'b', order: 2, text: 'b' })
    scopes.agent.ctx.systemPrompt.context({ name: 'a', order: 2, text: 'a' })
    scopes.preset.ctx.systemPrompt.context({ name: 'B', order: 2, text: 'B' })
    scopes.sub.ctx.systemPrompt.context({ name: 'z', order: -1, text: 'z' })
    app.systemPrompt.context({ name: 'é', order: 2, text: 'é' })
    expect(names((await app.systemPrompt.prepare({ scope: keys.sub })).contexts)).toEqual(['z', 'B', 'a', 'b', 'é'])
  })

  test('copies interpolate: false onto an assembled context, marks it registered, and nothing else', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'lit', order: 0, text: '{{x}}', interpolate: false, required: true, stability: 'volatile' })
    expect((await app.systemPrompt.prepare()).contexts).toStrictEqual([{ name: 'lit', text: '{{x}}', interpolate: false, registered: true }])
  })

  test('when suppressed, yields only required contexts and never calls optional providers', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const optional = vi.fn(() => 'optional')
    app.systemPrompt.context({ name: 'optional', order: 0, text: optional })
    app.systemPrompt.context({ name: 'sandbox', order: 1, text: 'sandboxed', required: true })
    scopes.preset.ctx.systemPrompt.suppressRuntimeContext()
    expect((await app.systemPrompt.prepare({ scope: keys.sub })).contexts).toEqual([{ name: 'sandbox', text: 'sandboxed', registered: true }])
    expect(optional).not.toHaveBeenCalled()
  })

  test('a scoped suppressor does not suppress the global view or a sibling', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    scopes.agent.ctx.systemPrompt.suppressRuntimeContext()
    expect((await app.systemPrompt.prepare()).contexts).toEqual([{ name: 'date', text: 'today', registered: true }])
    expect((await app.systemPrompt.prepare({ scope: keys.agent2 })).contexts).toEqual([{ name: 'date', text: 'today', registered: true }])
    expect((await app.systemPrompt.prepare({ scope: keys.sub })).contexts).toEqual([])
  })

  test('suppression removes optional contexts a prepare listener added, keeping required ones', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'S', required: true })
    app.on('system-prompt/prepare', async (preparation, _context, next) => {
      preparation.contexts.push({ name: 'added', text: 'by listener' })
      return next()
    })
    expect((await app.systemPrompt.prepare()).contexts).toEqual([{ name: 'sandbox', text: 'S', registered: true }])
  })

  test('a suppressor registered by a prepare listener applies to that preparation', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      app.systemPrompt.suppressRuntimeContext()
      return next()
    })
    expect((await app.systemPrompt.prepare()).contexts).toEqual([])
  })

  test('rejects with signal.reason when aborted before the waterfall, calling no provider', async () => {
    const app = await mount(BARE)
    const provider = vi.fn(() => 'V')
    app.systemPrompt.variable('v', provider)
    const listener = vi.fn(async (p: PromptPreparation, _c: AssembleContext, next: () => Promise<PromptPreparation>) => next())
    app.on('system-prompt/prepare', listener)
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    await expect(app.systemPrompt.prepare({ signal: controller.signal })).rejects.toBe(reason)
    expect(provider).not.toHaveBeenCalled()
    expect(listener).not.toHaveBeenCalled()
  })

  test('rejects with signal.reason when aborted during the waterfall', async () => {
    const app = await mount(BARE)
    const controller = new AbortController()
    const reason = { why: 'late' }
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      controller.abort(reason)
      return next()
    })
    await expect(app.systemPrompt.prepare({ signal: controller.signal })).rejects.toBe(reason)
  })

  test('rejects with the error of a listener that throws', async () => {
    const app = await mount(BARE)
    const error = new Error('listener failed')
    app.on('system-prompt/prepare', async () => {
      throw error
    })
    await expect(app.systemPrompt.prepare()).rejects.toBe(error)
  })

  test('rejects with the error of a variable provider that throws', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('v', () => {
      throw new Error('provider failed')
    })
    await expect(app.systemPrompt.prepare()).rejects.toThrow('provider failed')
  })

  test('a variable provider returning a non-string fails, naming the variable', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('v', () => 42 as never)
    await expect(app.systemPrompt.prepare()).rejects.toThrow('prompt variable "v"')
  })

  test('a context provider returning a non-string fails, naming the context', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.context({ name: 'env', order: 0, text: () => null as never })
    await expect(app.systemPrompt.prepare({ scope: keys.agent })).rejects.toThrow('runtime context "env" in scope "agent"')
  })

  test('a listener resolving to something other than a preparation fails', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/prepare', (async () => ({ variables: {} })) as never)
    await expect(app.systemPrompt.prepare()).rejects.toThrow('"system-prompt/prepare" listener resolved to')
  })

  test('the waterfall result is what prepare resolves to', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('v', 'registry')
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const result = await next()
      return { variables: { ...result.variables, v: 'listener', w: 'added' }, contexts: [{ name: 'x', text: 'X' }] }
    })
    expect(await app.systemPrompt.prepare()).toEqual({
      variables: { v: 'listener', w: 'added' },
      contexts: [{ name: 'x', text: 'X' }],
    })
  })

  test('a section registered by a prepare listener is in the assembly that follows', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      app.systemPrompt.section({ name: 'late', order: 0, text: 'registered while preparing' })
      return next()
    })
    expect(ownSections(await app.systemPrompt.assemble())).toStrictEqual([
      { name: 'late', order: 0, text: 'registered while preparing' },
    ])
  })

  test('a tool provider registered by a prepare listener is in the assembly that follows', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      app.systemPrompt.tools(() => ({ schemas: [tool('late')] }))
      return next()
    })
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['late'])
  })

  test('a variable registered by a prepare listener joins the preparation, so the section registered with it renders', async () => {
    const app = await mount(BARE)
    let registered = false
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      if (!registered) {
        registered = true
        app.systemPrompt.variable('branch', () => 'main')
        app.systemPrompt.variable('kept', 'registered')
        app.systemPrompt.section({ name: 'git', order: 0, text: 'On {{branch}}, {{kept}}.' })
      }
      const result = await next()
      return { ...result, variables: { ...result.variables, kept: 'the listener’s' } }
    })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.variables).toEqual({ branch: 'main', kept: 'the listener’s' })
    const rendered = render(assembly)
    expect(rendered.text).toBe('On main, the listener’s.')
    expect(rendered.variables.map(({ name, layer }) => [name, layer])).toEqual([['branch', 'global'], ['kept', 'global']])
  })

  test('variables a parent re-link brings while the prepare waterfall runs join the preparation', async () => {
    const app = await mount(BARE)
    const [p1, p2, agent] = [{ name: 'p1' }, { name: 'p2' }, { name: 'agent' }]
    const scopes = { p1: await mintScope(app, p1), p2: await mintScope(app, p2), agent: await mintScope(app, agent) }
    const link = bindScopeParent(agent, p1)
    scopes.p2.ctx.systemPrompt.variable('repo', 'promptloom')
    scopes.p2.ctx.systemPrompt.section({ name: 'repo', order: 0, text: 'Repo {{repo}}.' })
    let relinked = false
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      if (!relinked) link.rebind(p2)
      relinked = true
      return next()
    })
    expect(render(await app.systemPrompt.assemble({ scope: agent })).text).toBe('Repo promptloom.')
  })

  test('a context registered by a prepare listener waits for the next preparation (the preparation is authoritative)', async () => {
    const app = await mount(BARE)
    let registered = false
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      if (!registered) {
        registered = true
        app.systemPrompt.context({ name: 'late', order: 0, text: 'L' })
      }
      return next()
    })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([])
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'late', text: 'L', registered: true }])
  })

  test('a scoped section registered by a scoped prepare listener is in that scope’s assembly', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.on('system-prompt/prepare', async (_preparation, _context, next) => {
      scopes.agent.ctx.systemPrompt.section({ name: 'late', order: 0, text: 'L' })
      return next()
    })
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: keys.agent })))).toEqual(['late'])
  })
})

function labelOfContext(context: AssembleContext): string {
  return (context.scope as { name?: string } | undefined)?.name ?? 'global'
}
