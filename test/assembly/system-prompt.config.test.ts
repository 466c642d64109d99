import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import {
  CONTEXT_ORDERS,
  createScope,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  renderPrompt,
  SECTION_ORDERS,
  SystemPrompt,
  TOOL_ORDER_REST,
  type PromptContextOrderName,
  type PromptSectionOrderName,
  type SystemPromptConfig,
} from '../../src/index.js'
import DefaultExport from '../../src/index.js'
import { BARE, family, mount, names, tool } from './system-prompt.fixtures.js'
import { REFERENCE_CONTEXT_BANDS, REFERENCE_SECTION_BANDS } from '../reference/orders.js'

describe('config defaults', () => {
  test('the default export is the SystemPrompt service class', () => {
    expect(DefaultExport).toBe(SystemPrompt)
  })

  test('provides ctx.systemPrompt as an instance of SystemPrompt', async () => {
    const app = await mount()
    expect(app.systemPrompt).toBeInstanceOf(SystemPrompt)
  })

  test('registers the identity, persona prefix and persona suffix sections at their bands', async () => {
    const app = await mount()
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.sections).toStrictEqual([
      { name: HARNESS_IDENTITY_SECTION, order: SECTION_ORDERS.HARNESS_IDENTITY, text: 'You are an AI agent.' },
      { name: PERSONA_PREFIX_SECTION, order: SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, text: '' },
      { name: PERSONA_SUFFIX_SECTION, order: SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX, text: '' },
    ])
  })

  test('the default prompt renders as the identity text alone (empty persona sections render as nothing)', async () => {
    const app = await mount()
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('You are an AI agent.')
  })

  test('the section names are the exported constants', () => {
    expect([HARNESS_IDENTITY_SECTION, PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION]).toEqual([
      'harness:identity',
      'deployment:persona-prefix',
      'deployment:persona-suffix',
    ])
  })

  test('an empty config equals the defaults', async () => {
    const app = await mount({})
    const defaults = await mount()
    expect(await app.systemPrompt.assemble()).toEqual(await defaults.systemPrompt.assemble())
  })

  test('registers no tools, contexts or variables by default', async () => {
    const app = await mount()
    const assembly = await app.systemPrompt.assemble()
    expect({ tools: assembly.tools, contexts: assembly.contexts, variables: assembly.variables }).toEqual({
      tools: [],
      contexts: [],
      variables: {},
    })
  })
})

describe('identity and persona sections', () => {
  test('identity replaces the identity text', async () => {
    const app = await mount({ identity: 'I am Loom.' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('I am Loom.')
  })

  test('includeHarnessIdentity: false registers no identity section, even with an identity text', async () => {
    const app = await mount({ includeHarnessIdentity: false, identity: 'I am Loom.' })
    expect(names((await app.systemPrompt.assemble()).sections)).toEqual([PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION])
  })

  test('persona prefix and suffix bracket first-party sections', async () => {
    const app = await mount({ identity: 'I am Loom.', personaPrefix: 'Prefix.', personaSuffix: 'Suffix.' })
    app.systemPrompt.section({ name: 'guide', order: SECTION_ORDERS.TOOL_GUIDANCE, text: 'Use tools.' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('I am Loom.\n\nPrefix.\n\nUse tools.\n\nSuffix.')
  })

  test('persona prefix and suffix are templates', async () => {
    const app = await mount({ ...BARE, personaPrefix: 'Be {{tone}}.', personaSuffix: 'Work in {{cwd}}.' })
    app.systemPrompt.variable('tone', 'terse')
    app.systemPrompt.variable('cwd', '/work')
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('Be terse.\n\nWork in /work.')
  })

  test('the configured sections live in the global layer', async () => {
    const app = await mount()
    expect(app.systemPrompt.inspect().sections).toEqual([
      { name: HARNESS_IDENTITY_SECTION, layer: 'global', shadows: [] },
      { name: PERSONA_PREFIX_SECTION, layer: 'global', shadows: [] },
      { name: PERSONA_SUFFIX_SECTION, layer: 'global', shadows: [] },
    ])
  })

  test('a scoped section named like the identity shadows it in that scope only', async () => {
    const app = await mount()
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: HARNESS_IDENTITY_SECTION, order: -1000, text: 'I am the agent.' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: keys.agent }))).toBe('I am the agent.')
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: keys.sub }))).toBe('I am the agent.')
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: keys.agent2 }))).toBe('You are an AI agent.')
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('You are an AI agent.')
  })

  test('a scoped persona section shadows the global one and reports it in inspect', async () => {
    const app = await mount({ personaSuffix: 'global suffix' })
    const { keys, scopes } = await family(app)
    scopes.preset.ctx.systemPrompt.section({ name: PERSONA_SUFFIX_SECTION, order: 10200, text: 'preset suffix' })
    const assembly = await app.systemPrompt.assemble({ scope: keys.agent })
    expect(assembly.sections.at(-1)).toStrictEqual({ name: PERSONA_SUFFIX_SECTION, order: 10200, text: 'preset suffix' })
    expect(app.systemPrompt.inspect(keys.agent).sections.at(-1)).toEqual({
      name: PERSONA_SUFFIX_SECTION,
      layer: keys.preset,
      shadows: ['global'],
    })
  })

  test.each([HARNESS_IDENTITY_SECTION, PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION])(
    'a global section named %s is already registered',
    async (name) => {
      const app = await mount()
      expect(() => app.systemPrompt.section({ name, order: 0, text: 'x' })).toThrow('already registered')
    },
  )

  test('without the identity section, a global section may take its name', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: HARNESS_IDENTITY_SECTION, order: -1000, text: 'Mine.' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('Mine.')
  })

  test('the configured sections stay global when the service is loaded under a scope', async () => {
    const app = new Context()
    const key = { name: 'loader' }
    const loader = createScope(app, key)
    await loader.ctx.plugin(SystemPrompt, { identity: 'I am Loom.' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('I am Loom.')
    expect(app.systemPrompt.inspect(key).sections.map((entry) => entry.layer)).toEqual(['global', 'global', 'global'])
  })
})

describe('includeRuntimeContext', () => {
  test('false suppresses optional contexts and keeps required ones', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    app.systemPrompt.context({ name: 'date', order: 1, text: 'today' })
    app.systemPrompt.context({ name: 'sandbox', order: 0, text: 'sandboxed', required: true })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'sandbox', text: 'sandboxed', registered: true }])
  })

  test('false suppresses in every scope too', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.context({ name: 'cwd', order: 1, text: '/work' })
    expect((await app.systemPrompt.prepare({ scope: keys.sub })).contexts).toEqual([])
  })

  test('true (the default) keeps optional contexts', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'date', order: 1, text: 'today' })
    expect((await app.systemPrompt.assemble()).contexts).toEqual([{ name: 'date', text: 'today', registered: true }])
  })

  test('the config suppressor is independent of a registered one', async () => {
    const app = await mount({ ...BARE, includeRuntimeContext: false })
    app.systemPrompt.context({ name: 'date', order: 1, text: 'today' })
    const dispose = app.systemPrompt.suppressRuntimeContext()
    await dispose()
    expect((await app.systemPrompt.assemble()).contexts).toEqual([])
  })
})

describe('config validation at load', () => {
  test.each<[string, unknown]>([
    ['a toolOrder without the rest entry', { toolOrder: ['bash'] }],
    ['a toolOrder naming a tool twice', { toolOrder: ['bash', TOOL_ORDER_REST, 'bash'] }],
    ['a toolOrder with the rest entry twice', { toolOrder: [TOOL_ORDER_REST, TOOL_ORDER_REST] }],
    ['a toolOrder that is not an array', { toolOrder: 'bash' }],
    ['a toolOrder with a non-string entry', { toolOrder: [TOOL_ORDER_REST, 3] }],
    ['a non-boolean includeHarnessIdentity', { includeHarnessIdentity: 'yes' }],
    ['a non-boolean includeRuntimeContext', { includeRuntimeContext: 'no' }],
    ['a non-string identity', { identity: 42 }],
    ['a non-string personaPrefix', { personaPrefix: null }],
    ['a non-string personaSuffix', { personaSuffix: ['x'] }],
  ])('rejects %s with a TypeError', async (_, config) => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, config as SystemPromptConfig)).rejects.toThrow(TypeError)
  })

  test('a toolOrder without the rest entry names the rest entry in the error', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { toolOrder: ['bash'] })).rejects.toThrow(
      `toolOrder must list "${TOOL_ORDER_REST}" exactly once`,
    )
  })

  test('a duplicate toolOrder name is named in the error', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { toolOrder: ['bash', TOOL_ORDER_REST, 'bash'] })).rejects.toThrow(
      'toolOrder lists "bash" more than once',
    )
  })

  test('a duplicated rest entry is named in the error', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { toolOrder: [TOOL_ORDER_REST, 'a', TOOL_ORDER_REST] })).rejects.toThrow(
      `toolOrder lists "${TOOL_ORDER_REST}" more than once`,
    )
  })

  test('a rejected config provides no service', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { toolOrder: ['bash'] })).rejects.toThrow()
    expect(app.get('systemPrompt')).toBeUndefined()
  })

  test('an unknown config key is rejected (the code rejects typos rather than ignoring them)', async () => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { identiy: 'x' } as SystemPromptConfig)).rejects.toThrow(
      'unknown systemPrompt config key "identiy"',
    )
  })

  test('a valid toolOrder loads and orders tools', async () => {
    const app = await mount({ ...BARE, toolOrder: ['read', TOOL_ORDER_REST] })
    app.systemPrompt.tools(() => ({ schemas: [tool('bash'), tool('read')] }))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['read', 'bash'])
  })

  test('the toolOrder array is copied at load (mutating it later changes nothing)', async () => {
    const toolOrder = ['read', TOOL_ORDER_REST]
    const app = await mount({ ...BARE, toolOrder })
    toolOrder.reverse()
    app.systemPrompt.tools(() => ({ schemas: [tool('bash'), tool('read')] }))
    expect(names((await app.systemPrompt.assemble()).tools)).toEqual(['read', 'bash'])
  })
})

describe('order bands', () => {
  test('SECTION_ORDERS holds the section bands of the spec (the oracle writes them out from SPEC §2)', () => {
    expect(SECTION_ORDERS).toStrictEqual(REFERENCE_SECTION_BANDS)
  })

  test('CONTEXT_ORDERS holds the context bands of the spec', () => {
    expect(CONTEXT_ORDERS).toStrictEqual(REFERENCE_CONTEXT_BANDS)
  })

  test('the order tables are frozen', () => {
    expect(Object.isFrozen(SECTION_ORDERS)).toBe(true)
    expect(Object.isFrozen(CONTEXT_ORDERS)).toBe(true)
  })

  test('getSectionOrder returns every band of SECTION_ORDERS', async () => {
    const app = await mount()
    for (const name of Object.keys(SECTION_ORDERS) as PromptSectionOrderName[]) {
      expect(app.systemPrompt.getSectionOrder(name)).toBe(SECTION_ORDERS[name])
    }
  })

  test('getContextOrder returns every band of CONTEXT_ORDERS', async () => {
    const app = await mount()
    for (const name of Object.keys(CONTEXT_ORDERS) as PromptContextOrderName[]) {
      expect(app.systemPrompt.getContextOrder(name)).toBe(CONTEXT_ORDERS[name])
    }
  })

  test('an unknown band name throws a TypeError listing the known ones', async () => {
    const app = await mount()
    expect(() => app.systemPrompt.getSectionOrder('NOPE' as PromptSectionOrderName)).toThrow(
      /unknown section order "NOPE"; known: HARNESS_IDENTITY/,
    )
    expect(() => app.systemPrompt.getContextOrder('toString' as PromptContextOrderName)).toThrow(TypeError)
  })

  test('a section placed with getSectionOrder sorts between the persona sections', async () => {
    const app = await mount({ personaPrefix: 'P', personaSuffix: 'S' })
    app.systemPrompt.section({ name: 'sdk', order: app.systemPrompt.getSectionOrder('TOOLS_SDK'), text: 'SDK' })
    app.systemPrompt.section({ name: 'plan', order: app.systemPrompt.getSectionOrder('PLAN_POLICY'), text: 'Plan' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('You are an AI agent.\n\nP\n\nPlan\n\nSDK\n\nS')
  })

  test('contexts placed with getContextOrder sort by band', async () => {
    const app = await mount(BARE)
    const sp = app.systemPrompt
    sp.context({ name: 'delegation', order: sp.getContextOrder('SUBAGENT_DELEGATION'), text: 'D' })
    sp.context({ name: 'sandbox', order: sp.getContextOrder('SANDBOX_POLICY'), text: signal('S') })
    sp.context({ name: 'approval', order: sp.getContextOrder('APPROVAL_POLICY'), text: () => 'A' })
    expect(names((await sp.prepare()).contexts)).toEqual(['sandbox', 'approval', 'delegation'])
  })
})
