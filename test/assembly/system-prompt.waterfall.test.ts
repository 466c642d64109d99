import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import {
  renderContextSnapshot,
  renderPrompt,
  TOOL_ORDER_REST,
  type AssembleContext,
  type ToolProviderResult,
} from '../../src/index.js'
import { BARE, family, mount, names, ownSections, tool } from './system-prompt.fixtures.js'

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
