import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import {
  renderContextSnapshot,
  renderPrompt,
  TOOL_ORDER_REST,
  type AssembleContext,
  type PromptPreparation,
  type ToolProviderResult,
} from '../../src/index.js'
import { BARE, family, mount, names, ownSections, tool } from './system-prompt.fixtures.js'

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

describe('assemble: sections', () => {
  test('prepares first when no preparation is given', async () => {
    const app = await mount(BARE)
    const listener = vi.fn(async (p: PromptPreparation, _c: AssembleContext, next: () => Promise<PromptPreparation>) => next())
    app.on('system-prompt/prepare', listener)
    app.systemPrompt.variable('v', 'V')
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    const assembly = await app.systemPrompt.assemble()
    expect(listener).toHaveBeenCalledTimes(1)
    expect({ contexts: assembly.contexts, variables: assembly.variables }).toEqual({
      contexts: [{ name: 'c', text: 'C', registered: true }],
      variables: { v: 'V' },
    })
  })

  test('uses a given preparation without preparing again', async () => {
    const app = await mount(BARE)
    const context = vi.fn(() => 'registry')
    app.systemPrompt.context({ name: 'c', order: 0, text: context })
    const preparation = await app.systemPrompt.prepare()
    const listener = vi.fn(async (p: PromptPreparation, _c: AssembleContext, next: () => Promise<PromptPreparation>) => next())
    app.on('system-prompt/prepare', listener)
    preparation.contexts[0]!.text = 'accepted'
    preparation.variables.extra = 'kept'
    const assembly = await app.systemPrompt.assemble({}, preparation)
    expect(listener).not.toHaveBeenCalled()
    expect(context).toHaveBeenCalledTimes(1)
    expect({ contexts: assembly.contexts, variables: assembly.variables }).toEqual({
      contexts: [{ name: 'c', text: 'accepted', registered: true }],
      variables: { extra: 'kept' },
    })
  })

  test('sorts sections by order, then by code-unit name (so "B" comes before "a")', async () => {
    const app = await mount(BARE)
    for (const name of ['b', 'a', 'B', 'é', 'z', 'A1']) app.systemPrompt.section({ name, order: 1, text: name })
    app.systemPrompt.section({ name: 'first', order: -5, text: 'first' })
    app.systemPrompt.section({ name: 'frac', order: 1.5, text: 'frac' })
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['first', 'A1', 'B', 'a', 'b', 'z', 'é', 'frac'])
  })

  test('a sub-agent sees global, preset and agent sections, each name from its nearest layer', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: 'global' })
    app.systemPrompt.section({ name: 'g', order: 1, text: 'G' })
    scopes.preset.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'preset' })
    scopes.preset.ctx.systemPrompt.section({ name: 'p', order: 2, text: 'P' })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 3, text: 'A' })
    scopes.sub.ctx.systemPrompt.section({ name: 's', order: 4, text: 'S' })
    const texts = async (scope?: object) => ownSections(await app.systemPrompt.assemble({ scope })).map((s) => s.text)
    expect(await texts(keys.sub)).toEqual(['agent', 'G', 'P', 'A', 'S'])
    expect(await texts(keys.agent)).toEqual(['agent', 'G', 'P', 'A'])
    expect(await texts(keys.agent2)).toEqual(['preset', 'G', 'P'])
    expect(await texts(keys.preset)).toEqual(['preset', 'G', 'P'])
    expect(await texts()).toEqual(['global', 'G'])
  })

  test('shadowed providers along the chain are never called', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const global = vi.fn(() => 'global')
    const preset = vi.fn(() => 'preset')
    const agent = vi.fn(() => 'agent')
    app.systemPrompt.section({ name: 'who', order: 0, text: global })
    scopes.preset.ctx.systemPrompt.section({ name: 'who', order: 0, text: preset })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: agent })
    scopes.sub.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'sub' })
    expect(ownSections(await app.systemPrompt.assemble({ scope: keys.sub }))[0]!.text).toBe('sub')
    expect([global, preset, agent].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0])
  })

  test('a shadowing section takes its own order', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'x', order: 0, text: 'x' })
    app.systemPrompt.section({ name: 'y', order: 1, text: 'y' })
    scopes.agent.ctx.systemPrompt.section({ name: 'x', order: 2, text: 'x2' })
    expect(ownSections(await app.systemPrompt.assemble({ scope: keys.agent }))).toStrictEqual([
      { name: 'y', order: 1, text: 'y' },
      { name: 'x', order: 2, text: 'x2' },
    ])
  })

  test('copies interpolate: false and complete: true onto assembled sections, nothing else', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A', interpolate: false, complete: true, stability: 'static' })
    expect((await app.systemPrompt.assemble()).sections).toStrictEqual([
      { name: 'a', order: 0, text: 'A', interpolate: false, complete: true },
    ])
  })

  test('interpolate: true and complete: false are not copied', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A', interpolate: true, complete: false })
    expect(ownSections(await app.systemPrompt.assemble())).toStrictEqual([{ name: 'a', order: 0, text: 'A' }])
  })

  test('a section provider returning a non-string fails, naming the section', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'bad', order: 0, text: () => 42 as never })
    await expect(app.systemPrompt.assemble()).rejects.toThrow('prompt section "bad"')
  })

  test('a signal section holding a non-string fails, naming the section', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'bad', order: 0, text: signal(undefined as unknown as string) })
    await expect(app.systemPrompt.assemble()).rejects.toThrow('prompt section "bad" text signal holds undefined')
  })

  test('a section provider that throws rejects the assembly with its error', async () => {
    const app = await mount(BARE)
    const error = new Error('provider failed')
    app.systemPrompt.section({ name: 'boom', order: 0, text: () => { throw error } })
    await expect(app.systemPrompt.assemble()).rejects.toBe(error)
  })

  test('the next assembly after a fixed fault is correct (no poisoned memo)', async () => {
    const app = await mount(BARE)
    const failing = signal(true)
    app.systemPrompt.section({ name: 'a', order: 0, text: () => (failing.value ? (42 as never) : 'fine') })
    await expect(app.systemPrompt.assemble()).rejects.toThrow()
    failing.value = false
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('fine')
  })
})

describe('assemble: tools', () => {
  test('contributes tools from global and chain providers, but not a sibling’s', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.tools(() => ({ schemas: [tool('grep'), tool('bash')] }))
    scopes.preset.ctx.systemPrompt.tools(signal<ToolProviderResult>({ schemas: [tool('Edit')] }))
    scopes.agent.ctx.systemPrompt.tools(() => ({ schemas: [tool('read')] }))
    scopes.agent2.ctx.systemPrompt.tools(() => ({ schemas: [tool('web')] }))
    scopes.sub.ctx.systemPrompt.tools(() => ({ schemas: [tool('task')] }))
    expect(names((await app.systemPrompt.assemble({ scope: keys.sub })).tools)).toEqual(['Edit', 'bash', 'grep', 'read', 'task'])
    expect(names((await app.systemPrompt.assemble({ scope: keys.agent2 })).tools)).toEqual(['Edit', 'bash', 'grep', 'web'])
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['bash', 'grep'])
  })

  test('returns tools equal to, but detached from, the provider’s schemas', async () => {
    const app = await mount(BARE)
    const schema = tool('bash')
    app.systemPrompt.tools(() => ({ schemas: [schema] }))
    const { tools } = await app.systemPrompt.assemble()
    expect(tools).toEqual([schema])
    expect(tools[0]).not.toBe(schema)
    expect(tools[0]!.parameters).not.toBe(schema.parameters)
  })

  test('mutating the provider’s schema after the assembly does not change its result', async () => {
    const app = await mount(BARE)
    const schema = { name: 'bash', description: 'run', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }
    app.systemPrompt.tools(() => ({ schemas: [schema] }))
    const { tools } = await app.systemPrompt.assemble()
    schema.description = 'changed'
    ;(schema.parameters.properties.cmd as { type: string }).type = 'number'
    expect(tools).toEqual([
      { name: 'bash', description: 'run', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
    ])
  })

  test('result schemas are deep-frozen', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    const [schema] = (await app.systemPrompt.assemble()).tools
    expect(Object.isFrozen(schema)).toBe(true)
    expect(Object.isFrozen(schema!.parameters)).toBe(true)
    expect(Object.isFrozen((schema!.parameters as { properties: object }).properties)).toBe(true)
    expect(() => {
      ;(schema as { description: string }).description = 'x'
    }).toThrow(TypeError)
  })

  test('the tools array itself is fresh per assembly', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    const first = await app.systemPrompt.assemble()
    first.tools.push(tool('injected'))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['bash'])
  })

  test('without toolOrder, tools are sorted by code-unit name', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: ['b', 'a', 'B', '_x', 'Z'].map(tool) }))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['B', 'Z', '_x', 'a', 'b'])
  })

  test('toolOrder puts listed tools at their position and the rest, sorted, at the rest entry', async () => {
    const app = await mount({ ...BARE, toolOrder: ['read', TOOL_ORDER_REST, 'bash'] })
    app.systemPrompt.tools(() => ({ schemas: ['zip', 'bash', 'b', 'Z', 'read'].map(tool) }))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['read', 'Z', 'b', 'zip', 'bash'])
  })

  test('a toolOrder name that a provider knows but does not supply is skipped', async () => {
    const app = await mount({ ...BARE, toolOrder: ['gone', 'read', TOOL_ORDER_REST] })
    app.systemPrompt.tools(() => ({ schemas: [tool('bash'), tool('read')], knownNames: ['bash', 'read', 'gone'] }))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['read', 'bash'])
  })

  test('knownNames of one provider cover a toolOrder name for the union of providers', async () => {
    const app = await mount({ ...BARE, toolOrder: [TOOL_ORDER_REST, 'web'] })
    const { keys, scopes } = await family(app)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    scopes.preset.ctx.systemPrompt.tools(() => ({ schemas: [], knownNames: ['web'] }))
    expect(names((await app.systemPrompt.assemble({ scope: keys.agent })).tools)).toEqual(['bash'])
    await expect(app.systemPrompt.assemble()).rejects.toThrow('unregistered tool "web"')
  })

  test('a toolOrder name outside every provider’s knownNames is an "unregistered tool", naming each', async () => {
    const app = await mount({ ...BARE, toolOrder: ['grep', 'bash', TOOL_ORDER_REST, 'web'] })
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    await expect(app.systemPrompt.assemble()).rejects.toThrow(
      'toolOrder lists unregistered tools "grep", "web"; known tools: bash',
    )
  })

  test('explicit knownNames replace the default universe of that provider', async () => {
    const app = await mount({ ...BARE, toolOrder: ['bash', TOOL_ORDER_REST] })
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')], knownNames: ['read'] }))
    await expect(app.systemPrompt.assemble()).rejects.toThrow('unregistered tool "bash"')
  })

  test('a provider returning the reserved rest name fails with "reserved"', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [tool(TOOL_ORDER_REST)] }))
    await expect(app.systemPrompt.assemble()).rejects.toThrow('reserved')
  })

  test('a tool provided by two providers fails, naming the tool', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    scopes.agent.ctx.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    await expect(app.systemPrompt.assemble({ scope: keys.agent })).rejects.toThrow('tool "bash" is provided more than once')
  })

  test.each<[string, unknown]>([
    ['a result without a schemas array', {}],
    ['null', null],
    ['a schema without a string name', { schemas: [{ description: 'x', parameters: {} }] }],
    ['knownNames that are not strings', { schemas: [], knownNames: [1] }],
  ])('a provider returning %s fails, mentioning the tool provider', async (_, result) => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => result as ToolProviderResult)
    await expect(app.systemPrompt.assemble()).rejects.toThrow(/tool/)
    await expect(app.systemPrompt.assemble()).rejects.toThrow(TypeError)
  })

  test('an assemble listener cannot replace the tools (they stay provider-owned)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      return { ...(await next()), tools: [tool('evil')] } as never
    })
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['bash'])
  })

  test('assemble listeners are not handed the tools', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    const seen: string[][] = []
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      seen.push(Object.keys(presentation).sort())
      return next()
    })
    await app.systemPrompt.assemble()
    expect(seen).toEqual([['contexts', 'sections', 'variables']])
  })

  test('a signal tool provider is read fresh on every assembly', async () => {
    const app = await mount(BARE)
    const provided = signal<ToolProviderResult>({ schemas: [tool('a')] })
    app.systemPrompt.tools(provided)
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['a'])
    provided.value = { schemas: [tool('b'), tool('c')] }
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['b', 'c'])
  })
})

describe('assemble: complete sections', () => {
  test('listeners see every section, and the complete one is restored as the only section afterwards', async () => {
    const app = await mount()
    app.systemPrompt.section({ name: 'whole', order: 50, text: 'ALL', complete: true })
    app.systemPrompt.section({ name: 'other', order: 60, text: 'other' })
    const seen: string[][] = []
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      seen.push(names(presentation.sections))
      return next()
    })
    const assembly = await app.systemPrompt.assemble()
    expect(seen).toEqual([['harness:identity', 'deployment:persona-prefix', 'whole', 'other', 'deployment:persona-suffix']])
    expect(assembly.sections).toStrictEqual([{ name: 'whole', order: 50, text: 'ALL', complete: true }])
  })

  test('the complete section is restored as collected even after a listener rewrote it', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'whole', order: 0, text: 'ALL', complete: true })
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      const whole = presentation.sections.find((section) => section.name === 'whole')!
      whole.text = 'tampered'
      whole.complete = false
      presentation.sections.push({ name: 'extra', order: 0, text: 'extra' })
      return next()
    })
    expect((await app.systemPrompt.assemble()).sections).toStrictEqual([
      { name: 'whole', order: 0, text: 'ALL', complete: true },
    ])
  })

  test('the complete section is restored even when a listener returned no sections', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'whole', order: 0, text: 'ALL', complete: true })
    app.on('system-prompt/assemble', async (_presentation, _context, next) => ({ ...(await next()), sections: [] }))
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('ALL')
  })

  test('a listener-set complete flag does not make a section complete', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      presentation.sections.find((section) => section.name === 'a')!.complete = true
      return next()
    })
    expect(ownSections(await app.systemPrompt.assemble())).toHaveLength(1)
    expect((await app.systemPrompt.assemble()).sections).toHaveLength(3)
  })

  test('a complete section keeps interpolate: false when restored', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'whole', order: 0, text: '{{raw}}', complete: true, interpolate: false })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.sections).toStrictEqual([{ name: 'whole', order: 0, text: '{{raw}}', interpolate: false, complete: true }])
    expect(renderPrompt(assembly)).toBe('{{raw}}')
  })

  test('more than one effective complete section fails with "multiple complete prompt sections"', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A', complete: true })
    scopes.agent.ctx.systemPrompt.section({ name: 'b', order: 0, text: 'B', complete: true })
    await expect(app.systemPrompt.assemble({ scope: keys.sub })).rejects.toThrow('multiple complete prompt sections')
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: keys.agent2 }))).toBe('A')
  })

  test('a shadowed complete section does not count', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'global', complete: true })
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'agent', complete: true })
    expect((await app.systemPrompt.assemble({ scope: keys.sub })).sections).toStrictEqual([
      { name: 'a', order: 0, text: 'agent', complete: true },
    ])
  })

  test('a scoped non-complete section shadowing a complete one lifts completeness in that scope', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'whole', complete: true })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B' })
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'part' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: keys.agent }))).toBe('part\n\nB')
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('whole')
  })
})

describe('assemble: suppression after the waterfall', () => {
  test('removes optional contexts an assemble listener added, keeping required ones', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'S', required: true })
    app.systemPrompt.suppressRuntimeContext()
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      presentation.contexts.push({ name: 'added', text: 'by listener' })
      return next()
    })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'sandbox', text: 'S', registered: true }])
  })

  test('keeps the listener’s text of a required context', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'S', required: true })
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      presentation.contexts[0]!.text = 'rewritten'
      return next()
    })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'sandbox', text: 'rewritten', registered: true }])
  })

  test('applies to a given preparation that still holds optional contexts', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    const preparation = await app.systemPrompt.prepare({ scope: keys.agent })
    scopes.agent.ctx.systemPrompt.suppressRuntimeContext()
    expect((await app.systemPrompt.assemble({ scope: keys.agent }, preparation)).contexts).toEqual([])
  })

  test('without a suppressor, contexts a listener added are kept', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      presentation.contexts.push({ name: 'added', text: 'by listener' })
      return next()
    })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'added', text: 'by listener' }])
  })
})

describe('assemble: the waterfall', () => {
  test('its result is authoritative for sections, contexts and variables', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'Hello {{who}}' })
    app.systemPrompt.variable('who', 'registry')
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const result = await next()
      return {
        sections: [...result.sections, { name: 'z', order: 99, text: 'Z' }],
        contexts: [],
        variables: { ...result.variables, who: 'listener' },
      }
    })
    const assembly = await app.systemPrompt.assemble()
    expect(renderPrompt(assembly)).toBe('Hello listener\n\nZ')
    expect(assembly.contexts).toEqual([])
  })

  test('a listener resolving to something without a sections array fails', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', (async (_p: unknown, _c: unknown, next: () => Promise<object>) => ({
      ...(await next()),
      sections: undefined,
    })) as never)
    await expect(app.systemPrompt.assemble()).rejects.toThrow('without a sections array')
  })

  test('a listener that throws rejects the assembly with its error', async () => {
    const app = await mount(BARE)
    const error = new Error('listener failed')
    app.on('system-prompt/assemble', async () => {
      throw error
    })
    await expect(app.systemPrompt.assemble()).rejects.toBe(error)
  })

  test('rejects with signal.reason when aborted before, calling no provider', async () => {
    const app = await mount(BARE)
    const section = vi.fn(() => 'S')
    app.systemPrompt.section({ name: 's', order: 0, text: section })
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    await expect(app.systemPrompt.assemble({ signal: controller.signal })).rejects.toBe(reason)
    expect(section).not.toHaveBeenCalled()
  })

  test('rejects with signal.reason when aborted during the prepare waterfall, before sections are read', async () => {
    const app = await mount(BARE)
    const section = vi.fn(() => 'S')
    app.systemPrompt.section({ name: 's', order: 0, text: section })
    const controller = new AbortController()
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      controller.abort('prepare-abort')
      return next()
    })
    await expect(app.systemPrompt.assemble({ signal: controller.signal })).rejects.toBe('prepare-abort')
    expect(section).not.toHaveBeenCalled()
  })

  test('rejects with signal.reason when aborted during the assemble waterfall', async () => {
    const app = await mount(BARE)
    const controller = new AbortController()
    const reason = new Error('late stop')
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      controller.abort(reason)
      return next()
    })
    await expect(app.systemPrompt.assemble({ signal: controller.signal })).rejects.toBe(reason)
  })

  test('rejects with signal.reason when aborted before assembling a given preparation', async () => {
    const app = await mount(BARE)
    const preparation = await app.systemPrompt.prepare()
    const controller = new AbortController()
    controller.abort('early')
    const listener = vi.fn(async (p: never, _c: never, next: () => Promise<never>) => next())
    app.on('system-prompt/assemble', listener)
    await expect(app.systemPrompt.assemble({ signal: controller.signal }, preparation)).rejects.toBe('early')
    expect(listener).not.toHaveBeenCalled()
  })

  test('a section registered during the assemble waterfall is not in that assembly, but in the next', async () => {
    const app = await mount(BARE)
    let registered = false
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      if (!registered) {
        registered = true
        app.systemPrompt.section({ name: 'late', order: 0, text: 'late' })
      }
      return next()
    })
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([])
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['late'])
  })
})

describe('assemble: a failed call poisons nothing', () => {
  test('a tool provider that returned a bad result and then a good one assembles correctly', async () => {
    const app = await mount(BARE)
    const result = signal<ToolProviderResult>({} as ToolProviderResult)
    app.systemPrompt.tools(result)
    await expect(app.systemPrompt.assemble()).rejects.toThrow('tool provider')
    result.value = { schemas: [tool('bash')] }
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['bash'])
  })

  test('an unregistered toolOrder name fails until a provider knows it', async () => {
    const app = await mount({ ...BARE, toolOrder: ['bash', TOOL_ORDER_REST] })
    await expect(app.systemPrompt.assemble()).rejects.toThrow('unregistered tool "bash"')
    app.systemPrompt.tools(() => ({ schemas: [], knownNames: ['bash'] }))
    expect((await app.systemPrompt.assemble()).tools).toEqual([])
  })

  test('resolving a complete-section conflict makes the next assembly succeed', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A', complete: true })
    const dispose = app.systemPrompt.section({ name: 'b', order: 0, text: 'B', complete: true })
    await expect(app.systemPrompt.assemble()).rejects.toThrow('multiple complete prompt sections')
    await dispose()
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('A')
  })

  test('an aborted assembly leaves the next one unaffected', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const expected = await app.systemPrompt.assemble()
    const controller = new AbortController()
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      if (!controller.signal.aborted) {
        presentation.sections.length = 0
        controller.abort('stop')
      }
      return next()
    })
    await expect(app.systemPrompt.assemble({ signal: controller.signal })).rejects.toBe('stop')
    expect(await app.systemPrompt.assemble()).toEqual(expected)
  })

  test('a throwing listener leaves the next assembly unaffected once removed', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    const expected = await app.systemPrompt.assemble()
    const off = app.on('system-prompt/prepare', async () => {
      throw new Error('listener failed')
    })
    await expect(app.systemPrompt.assemble()).rejects.toThrow('listener failed')
    off()
    expect(await app.systemPrompt.assemble()).toEqual(expected)
  })
})

describe('assemble: fresh results and fresh reads', () => {
  test('mutating a result never affects the registry or the next assembly', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    app.systemPrompt.variable('v', 'V')
    const first = await app.systemPrompt.assemble()
    const expected = structuredClone(first)
    ownSections(first)[0]!.text = 'mutated'
    first.sections.push({ name: 'pushed', order: 0, text: 'pushed' })
    first.contexts[0]!.text = 'mutated'
    first.contexts.length = 0
    first.variables.v = 'mutated'
    first.variables.w = 'added'
    expect(await app.systemPrompt.assemble()).toEqual(expected)
  })

  test('mutating what a listener was handed never affects the registry or the next assembly', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    app.systemPrompt.variable('v', 'V')
    const expected = structuredClone(await app.systemPrompt.assemble())
    let tamper = true
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      if (tamper) {
        tamper = false
        for (const section of presentation.sections) section.text = 'tampered'
        presentation.contexts[0]!.text = 'tampered'
        presentation.variables.v = 'tampered'
      }
      return next()
    })
    app.on('system-prompt/prepare', async (preparation, _context, next) => {
      if (tamper) preparation.contexts.push({ name: 'x', text: 'x' })
      return next()
    })
    await app.systemPrompt.assemble()
    expect(await app.systemPrompt.assemble()).toEqual(expected)
  })

  test('one preparation assembled twice yields independent contexts and variables', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    app.systemPrompt.variable('v', 'V')
    const preparation = await app.systemPrompt.prepare()
    const first = await app.systemPrompt.assemble({}, preparation)
    first.contexts[0]!.text = 'mutated'
    first.variables.v = 'mutated'
    const second = await app.systemPrompt.assemble({}, preparation)
    expect([second.contexts, second.variables, preparation.contexts]).toEqual([
      [{ name: 'c', text: 'C', registered: true }],
      { v: 'V' },
      [{ name: 'c', text: 'C', registered: true }],
    ])
  })

  test('a section disposed during the assemble waterfall stays in that assembly', async () => {
    const app = await mount(BARE)
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      await dispose()
      return next()
    })
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['a'])
    expect(ownSections(await app.systemPrompt.assemble())).toEqual([])
  })

  test('two assemblies share no mutable object', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    const [first, second] = [await app.systemPrompt.assemble(), await app.systemPrompt.assemble()]
    expect(first.sections).not.toBe(second.sections)
    expect(first.sections[0]).not.toBe(second.sections[0])
    expect(first.contexts).not.toBe(second.contexts)
    expect(first.contexts[0]).not.toBe(second.contexts[0])
    expect(first.variables).not.toBe(second.variables)
    expect(first.tools).not.toBe(second.tools)
  })

  test('each function provider is evaluated exactly once per call', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const spies = {
      section: vi.fn(() => 'S {{v}}'),
      context: vi.fn(() => 'C'),
      variable: vi.fn(() => 'V'),
      tools: vi.fn(() => ({ schemas: [tool('bash')] })),
    }
    app.systemPrompt.section({ name: 's', order: 0, text: spies.section })
    scopes.preset.ctx.systemPrompt.context({ name: 'c', order: 0, text: spies.context })
    scopes.agent.ctx.systemPrompt.variable('v', spies.variable)
    scopes.sub.ctx.systemPrompt.tools(spies.tools)
    const assembly = await app.systemPrompt.assemble({ scope: keys.sub })
    renderPrompt(assembly)
    renderContextSnapshot(assembly)
    expect(Object.values(spies).map((spy) => spy.mock.calls.length)).toEqual([1, 1, 1, 1])
    await app.systemPrompt.assemble({ scope: keys.sub })
    expect(Object.values(spies).map((spy) => spy.mock.calls.length)).toEqual([2, 2, 2, 2])
  })

  test('signal inputs are read fresh on every assembly', async () => {
    const app = await mount(BARE)
    const section = signal('s1')
    const context = signal('c1')
    const variable = signal<string | undefined>('v1')
    app.systemPrompt.section({ name: 's', order: 0, text: section })
    app.systemPrompt.context({ name: 'c', order: 0, text: context })
    app.systemPrompt.variable('v', variable)
    await app.systemPrompt.assemble()
    section.value = 's2'
    context.value = 'c2'
    variable.value = undefined
    const assembly = await app.systemPrompt.assemble()
    expect([ownSections(assembly)[0]!.text, assembly.contexts[0]!.text, assembly.variables]).toEqual([
      's2',
      'c2',
      { v: undefined },
    ])
  })

  test('providers receive the caller’s assemble context', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const seen: AssembleContext[] = []
    const context: AssembleContext = { scope: keys.agent, agent: { name: 'me' } }
    app.systemPrompt.section({ name: 's', order: 0, text: (c) => (seen.push(c), 'S') })
    app.systemPrompt.tools((c) => (seen.push(c), { schemas: [] }))
    await app.systemPrompt.assemble(context)
    expect(seen).toEqual([context, context])
    expect(seen[0]).toBe(context)
  })

  test('an unknown scope key assembles the global view', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'g', order: 0, text: 'G' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: { name: 'stranger' } }))).toBe('G')
  })
})

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
