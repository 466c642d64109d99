import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import { render, renderPrompt, type AssembleContext, type PromptPreparation } from '../../src/index.js'
import { BARE, family, mount, names, ownSections } from './system-prompt.fixtures.js'

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

  test('a provider that throws after an earlier one changed leaves no half-collected texts behind', async () => {
    const app = await mount(BARE)
    const first = signal('one')
    const failing = signal(false)
    app.systemPrompt.section({ name: 'a', order: 0, text: () => first.value })
    app.systemPrompt.section({ name: 'b', order: 1, text: () => (failing.value ? (42 as never) : 'two') })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('one\n\ntwo')
    first.value = 'uno'
    failing.value = true
    await expect(app.systemPrompt.assemble()).rejects.toThrow('prompt section "b"')
    failing.value = false
    const fixed = render(await app.systemPrompt.assemble())
    expect(fixed.text).toBe('uno\n\ntwo')
    expect(render(await app.systemPrompt.assemble())).toBe(fixed)
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
