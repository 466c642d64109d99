import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { comparePrompts, explain, render, renderContextSnapshot, renderPrompt } from '../../src/index.js'
import { BARE, family, mount } from '../assembly/system-prompt.fixtures.js'

describe('render(assembly)', () => {
  test('two views render a shared registration with their own values and label it with its registration', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'shared', order: 10, text: 'in {{cwd}}' })
    scopes.agent.ctx.systemPrompt.section({ name: 'own', order: 0, text: 'agent A' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'own', order: 0, text: 'agent B' })
    scopes.agent.ctx.systemPrompt.variable('cwd', '/a')
    scopes.agent2.ctx.systemPrompt.variable('cwd', '/b')
    app.systemPrompt.variable('tone', 'calm')
    app.systemPrompt.section({ name: 'tail', order: 20, text: 'the same {{tone}} tail' })
    const a = render(await app.systemPrompt.assemble({ scope: keys.agent }))
    const b = render(await app.systemPrompt.assemble({ scope: keys.agent2 }))
    expect(a.parts.map((part) => part.name)).toEqual(['own', 'shared', 'tail'])
    expect(a.parts[1]!.text).toBe('in /a')
    expect(b.parts[1]!.substitutions).toEqual([{ variable: 'cwd', start: 3, end: 5 }])
    expect(a.parts[2]).toEqual(b.parts[2])
    expect(b.text.slice(b.parts[2]!.start, b.parts[2]!.end)).toBe('the same calm tail')
    const tone = (prompt: typeof a) => prompt.variables.find((variable) => variable.name === 'tone')
    expect(tone(a)).toEqual({ name: 'tone', layer: 'global', stability: 'session' })
    expect(Object.isFrozen(tone(a))).toBe(true)
  })

  test('text equals renderPrompt and the parts carry their sources', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.variable('model', 'loom-1', { stability: 'static' })
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'Model {{model}}.', stability: 'static', cacheBreakpoint: true })
    scopes.agent.ctx.systemPrompt.section({ name: 'task', order: 5, text: 'Do the task.', required: true, priority: 3 })
    const assembly = await app.systemPrompt.assemble({ scope: keys.agent })
    const rendered = render(assembly)
    expect(rendered.text).toBe(renderPrompt(assembly))
    expect(rendered.text).toBe('Model loom-1.\n\nDo the task.')
    expect(rendered.parts.map(({ name, layer, origin, stability, variables, cacheBreakpoint, required, priority }) => ({
      name,
      layer,
      origin,
      stability,
      variables,
      cacheBreakpoint,
      required,
      priority,
    }))).toEqual([
      { name: 'intro', layer: 'global', origin: 'registry', stability: 'static', variables: ['model'], cacheBreakpoint: true, required: false, priority: 0 },
      { name: 'task', layer: keys.agent, origin: 'registry', stability: 'session', variables: [], cacheBreakpoint: false, required: true, priority: 3 },
    ])
    expect(rendered.variables).toEqual([{ name: 'model', layer: 'global', stability: 'static' }])
  })

  test('blocks split after a breakpoint section and at stability changes', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('now', () => '12:00', { stability: 'volatile' })
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A', stability: 'static' })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B', stability: 'static', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'c', order: 2, text: 'C' })
    app.systemPrompt.section({ name: 'd', order: 3, text: 'Now {{now}}', stability: 'volatile' })
    const { blocks } = render(await app.systemPrompt.assemble())
    expect(blocks).toEqual([
      { text: 'A\n\nB', parts: ['a', 'b'], stability: 'static', cacheBreakpoint: true },
      { text: 'C', parts: ['c'], stability: 'session', cacheBreakpoint: true },
      { text: 'Now 12:00', parts: ['d'], stability: 'volatile', cacheBreakpoint: false },
    ])
  })

  test('an unchanged assembly of a scope returns the same RenderedPrompt object', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.' })
    const first = render(await app.systemPrompt.assemble({ scope: keys.agent }))
    const second = render(await app.systemPrompt.assemble({ scope: keys.agent }))
    expect(second).toBe(first)
    expect(Object.isFrozen(second) && Object.isFrozen(second.parts) && Object.isFrozen(second.parts[0])).toBe(true)
  })

  test('a changed variable value yields a new RenderedPrompt with only the affected section re-rendered', async () => {
    const app = await mount(BARE)
    const cwd = signal<string | undefined>('/a')
    app.systemPrompt.variable('cwd', cwd)
    app.systemPrompt.section({ name: 'fixed', order: 0, text: 'Fixed.' })
    app.systemPrompt.section({ name: 'env', order: 1, text: 'In {{cwd}}.' })
    const first = render(await app.systemPrompt.assemble())
    cwd.value = '/b'
    const before = app.systemPrompt.stats()
    const second = render(await app.systemPrompt.assemble())
    expect(second).not.toBe(first)
    expect(second.text).toBe('Fixed.\n\nIn /b.')
    expect(second.parts[0]!.text).toBe(first.parts[0]!.text)
    expect(app.systemPrompt.stats().sectionRenders - before.sectionRenders).toBe(1)
  })

  test('a section a listener added or edited has origin waterfall; an untouched one stays registry', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B' })
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      const result = await next()
      return {
        ...result,
        sections: [
          ...result.sections.map((section) => (section.name === 'b' ? { ...section, text: 'B edited' } : section)),
          { name: 'extra', order: 2, text: 'Extra' },
        ],
      }
    })
    const { parts } = render(await app.systemPrompt.assemble())
    expect(parts.map(({ name, origin, layer }) => ({ name, origin, layer }))).toEqual([
      { name: 'a', origin: 'registry', layer: 'global' },
      { name: 'b', origin: 'waterfall', layer: 'global' },
      { name: 'extra', origin: 'waterfall', layer: undefined },
    ])
  })

  test('a copy of an assembly renders the same text from scratch, without layers', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'task', order: 0, text: 'Task.', cacheBreakpoint: true })
    const assembly = await app.systemPrompt.assemble({ scope: keys.agent })
    const copy = JSON.parse(JSON.stringify(assembly)) as typeof assembly
    const fromCopy = render(copy)
    expect(fromCopy.text).toBe(render(assembly).text)
    expect(fromCopy.parts[0]).toMatchObject({ name: 'task', layer: undefined, origin: 'waterfall', cacheBreakpoint: false })
  })

  test('substitutions locate values even when a value repeats the literal text around it', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('x', 'b')
    app.systemPrompt.variable('y', '')
    app.systemPrompt.section({ name: 's', order: 0, text: 'a{{x}}b{{y}}{{x}}c' })
    const rendered = render(await app.systemPrompt.assemble())
    expect(rendered.text).toBe('abbbc')
    expect(rendered.parts[0]!.substitutions).toEqual([
      { variable: 'x', start: 1, end: 2 },
      { variable: 'y', start: 3, end: 3 },
      { variable: 'x', start: 3, end: 4 },
    ])
    expect([0, 1, 2, 3, 4].map((offset) => explain(rendered, offset)?.variable)).toEqual([undefined, 'x', undefined, 'x', undefined])
  })

  test('values that move while the output stays the same move the substitutions too (explain follows)', async () => {
    const app = await mount(BARE)
    const p = signal<string | undefined>('a')
    const q = signal<string | undefined>('')
    app.systemPrompt.variable('p', p)
    app.systemPrompt.variable('q', q)
    app.systemPrompt.section({ name: 's', order: 0, text: '{{p}}{{q}}' })
    const first = render(await app.systemPrompt.assemble())
    expect(explain(first, 0)?.variable).toBe('p')
    p.value = ''
    q.value = 'a'
    const second = render(await app.systemPrompt.assemble())
    expect(second.text).toBe('a')
    expect(explain(second, 0)?.variable).toBe('q')
  })

  test('comparePrompts finds the prefix two agents share and the parts where they diverge', async () => {
    const app = await mount({ identity: 'You are an agent.' })
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'workspace', order: 10, text: 'Workspace /a' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'workspace', order: 10, text: 'Workspace /b' })
    const a = render(await app.systemPrompt.assemble({ scope: keys.agent }))
    const b = render(await app.systemPrompt.assemble({ scope: keys.agent2 }))
    expect(comparePrompts(a, b)).toEqual({
      length: 'You are an agent.\n\nWorkspace /'.length,
      bytes: 'You are an agent.\n\nWorkspace /'.length,
      firstDifferentPart: { a: 'workspace', b: 'workspace' },
    })
  })

  test('wrong-shaped input is a TypeError naming what is wrong (a preparation, a missing record, a bad item)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A {{x}}' })
    app.systemPrompt.variable('x', 'X')
    const preparation = await app.systemPrompt.prepare()
    const fails = (run: () => unknown, message: string) => {
      expect(run).toThrowError(message)
      expect(run).toThrow(TypeError)
    }
    const fix = '; pass the result of systemPrompt.assemble()'
    fails(() => render(preparation as never), `the assembly to render is an object without a sections array${fix}`)
    fails(() => render({} as never), `the assembly to render is an object without a sections array${fix}`)
    fails(() => render(null as never), `the assembly to render is null${fix}`)
    fails(() => render({ sections: [{ name: 's', text: 'hi {{x}}' }] } as never), `the assembly to render is an object without a variables record${fix}`)
    fails(() => render({ sections: [null], variables: {} } as never), 'the assembly to render has sections[0] = null; every section needs a string name and text')
    fails(() => renderPrompt({ sections: [{ text: 'hi' }], variables: {} } as never), 'has sections[0] = { name: undefined, text: string "hi" }')
    fails(() => renderContextSnapshot({ contexts: [{ name: 'c', text: 7 }], variables: {} } as never), 'has contexts[0] = { name: string "c", text: number 7 }')
  })

  test('a hand-built assembly with a non-string variable value fails naming the variable and the section', () => {
    const sections = [{ name: 's', text: 'x={{x}}' }]
    for (const [value, shown] of [[{ path: '/x' }, 'an object'], [42, 'number 42'], [null, 'null']] as const) {
      expect(() => render({ sections, variables: { x: value as never } })).toThrowError(
        new TypeError(`prompt variable "x" is ${shown} in prompt section "s"; a variable value must be a string, or undefined for no value`),
      )
    }
  })
})

describe('section() options for rendering', () => {
  test.each([
    ['cacheBreakpoint', 'yes', 'prompt section "s" option "cacheBreakpoint" must be a boolean (got string "yes")'],
    ['required', 1, 'prompt section "s" option "required" must be a boolean (got number 1)'],
    ['priority', Number.NaN, 'prompt section "s" priority must be a finite number (got number NaN)'],
  ])('a bad %s is a TypeError and registers nothing', async (key, value, message) => {
    const app = await mount(BARE)
    const before = app.systemPrompt.inspect()
    expect(() => app.systemPrompt.section({ name: 's', order: 0, text: 'S', [key]: value } as never)).toThrow(
      new TypeError(message + (key === 'priority' ? '; higher priorities are withheld last by a token budget' : '')),
    )
    expect(app.systemPrompt.inspect()).toEqual(before)
  })
})
