import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { TOOL_ORDER_REST, type ToolProviderResult } from '../../src/index.js'
import { BARE, family, mintScope, mount, names, tool } from './system-prompt.fixtures.js'

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

  test('a scope key is read only to label a tool provider in an error (SPEC Reliability: opaque keys)', async () => {
    const app = await mount(BARE)
    let reads = 0
    const key = new Proxy({ name: 'agent-1' }, { get: (target, property) => (reads++, Reflect.get(target, property)) })
    const scope = await mintScope(app, key)
    const provided = signal<ToolProviderResult>({ schemas: [tool('a')] })
    scope.ctx.systemPrompt.tools(provided)
    expect(names((await app.systemPrompt.assemble({ scope: key })).tools)).toEqual(['a'])
    provided.value = { schemas: [tool('b')] }
    expect(names((await app.systemPrompt.assemble({ scope: key })).tools)).toEqual(['b'])
    expect(reads).toBe(0)
    provided.value = { schemas: [{ description: 'x', parameters: {} }] } as never
    await expect(app.systemPrompt.assemble({ scope: key })).rejects.toThrow('tool provider #1 in scope "agent-1" returned')
    expect(reads).toBeGreaterThan(0)
  })
})
