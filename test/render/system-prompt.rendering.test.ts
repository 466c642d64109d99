import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import {
  joinContextSections,
  renderContextSections,
  renderContextSnapshot,
  renderPrompt,
  RUNTIME_CONTEXT_HEADER,
  type PromptAssembly,
} from '../../src/index.js'
import { BARE, family, mount } from '../assembly/system-prompt.fixtures.js'

const HEADER = 'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

/** An app whose global layer holds one section `intro` with `text` and the given variables. */
async function withIntro(text: string, variables: Record<string, string | (() => string | undefined)> = {}) {
  const app = await mount(BARE)
  for (const [name, value] of Object.entries(variables)) app.systemPrompt.variable(name, value)
  app.systemPrompt.section({ name: 'intro', order: 0, text })
  return app
}

async function rendered(app: Context, scope?: object): Promise<string> {
  return renderPrompt(await app.systemPrompt.assemble({ scope }))
}

describe('renderPrompt', () => {
  test('interpolates variables in each section and joins non-empty sections with a blank line', async () => {
    const app = await mount({ identity: 'I am {{name}}.' })
    app.systemPrompt.variable('name', 'Loom')
    app.systemPrompt.variable('cwd', () => '/work')
    app.systemPrompt.section({ name: 'env', order: 1, text: 'Work in {{cwd}} as {{name}}.' })
    expect(await rendered(app)).toBe('I am Loom.\n\nWork in /work as Loom.')
  })

  test('uses the nearest scope’s variable values', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 's', order: 0, text: 'cwd={{cwd}}' })
    app.systemPrompt.variable('cwd', '/')
    scopes.preset.ctx.systemPrompt.variable('cwd', () => '/preset')
    scopes.agent.ctx.systemPrompt.variable('cwd', signal<string | undefined>('/agent'))
    expect(await rendered(app, keys.sub)).toBe('cwd=/agent')
    expect(await rendered(app, keys.agent2)).toBe('cwd=/preset')
    expect(await rendered(app)).toBe('cwd=/')
  })

  test('keeps an interpolate: false section literal', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'raw', order: 0, text: 'Use {{ x }} and {{unknown}} as is.', interpolate: false })
    expect(await rendered(app)).toBe('Use {{ x }} and {{unknown}} as is.')
  })

  test('drops empty sections, including ones that interpolate to nothing', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('empty', '')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    app.systemPrompt.section({ name: 'b', order: 1, text: '' })
    app.systemPrompt.section({ name: 'c', order: 2, text: '{{empty}}' })
    app.systemPrompt.section({ name: 'd', order: 3, text: 'D' })
    expect(await rendered(app)).toBe('A\n\nD')
  })

  test('an assembly of only empty sections renders as the empty string', async () => {
    const app = await mount(BARE)
    expect(await rendered(app)).toBe('')
  })

  test('never re-scans substituted values', async () => {
    const app = await withIntro('a {{x}} b', { x: '{{y}}', y: 'Y' })
    expect(await rendered(app)).toBe('a {{y}} b')
  })

  test('a {{ with no }} after it is literal text', async () => {
    const app = await withIntro('{{x}} then open {{x and {{y', { x: 'X' })
    expect(await rendered(app)).toBe('X then open {{x and {{y')
  })

  test('an unknown variable fails with "unknown prompt variable", naming the section and the known variables', async () => {
    const app = await withIntro('cwd={{cwd}}', { date: 'today', model: 'm' })
    await expect(rendered(app)).rejects.toThrow(
      'unknown prompt variable "{{cwd}}" in prompt section "intro"; registered variables: date, model',
    )
  })

  test('{{constructor}} is an unknown variable (own-property lookup)', async () => {
    const app = await withIntro('{{constructor}}')
    await expect(rendered(app)).rejects.toThrow('unknown prompt variable "{{constructor}}" in prompt section "intro"')
  })

  test('{{constructor}} renders once registered', async () => {
    const app = await withIntro('{{constructor}}', { constructor: 'ctor' })
    expect(await rendered(app)).toBe('ctor')
  })

  test('a registered variable without a value fails with "has no value", naming the section', async () => {
    const app = await withIntro('{{later}}', { later: () => undefined })
    await expect(rendered(app)).rejects.toThrow('prompt variable "later" has no value in prompt section "intro"')
  })

  test.each(['{{ x }}', '{{}}', '{{{x}}}', '{{X}}', '{{x-y}}'])(
    '%s fails with "malformed prompt variable reference", naming the section',
    async (text) => {
      const app = await withIntro(`before ${text} after`, { x: 'X' })
      const render = rendered(app)
      await expect(render).rejects.toThrow('malformed prompt variable reference')
      await expect(render).rejects.toThrow('in prompt section "intro"')
    },
  )

  test('an error names the failing section, not its neighbours', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'fine', order: 0, text: 'ok' })
    app.systemPrompt.section({ name: 'broken', order: 1, text: '{{nope}}' })
    await expect(rendered(app)).rejects.toThrow('in prompt section "broken"')
  })

  test('a malformed group is reported before an unknown name in the same text', async () => {
    const app = await withIntro('{{nope}} {{ bad }}')
    await expect(rendered(app)).rejects.toThrow('malformed prompt variable reference')
  })

  test('renders a hand-built presentation the same way', () => {
    expect(
      renderPrompt({
        sections: [
          { name: 'a', order: 0, text: 'Hi {{who}}' },
          { name: 'b', order: 1, text: '{{who}}', interpolate: false },
          { name: 'c', order: 2, text: '' },
        ],
        variables: { who: 'you' },
      }),
    ).toBe('Hi you\n\n{{who}}')
  })

  test('a structured clone of an assembly renders to the same text', async () => {
    const app = await withIntro('Hi {{who}}', { who: 'you' })
    const assembly = await app.systemPrompt.assemble()
    expect(renderPrompt(structuredClone(assembly))).toBe(renderPrompt(assembly))
  })
})

describe('runtime-context rendering', () => {
  async function contexts() {
    const app = await mount(BARE)
    app.systemPrompt.variable('cwd', '/work')
    app.systemPrompt.context({ name: 'env', order: 0, text: 'cwd {{cwd}}' })
    app.systemPrompt.context({ name: 'empty', order: 1, text: '' })
    app.systemPrompt.context({ name: 'raw', order: 2, text: '{{cwd}}', interpolate: false })
    return app
  }

  test('renderContextSections interpolates each context and keeps only non-empty ones, in order', async () => {
    const app = await contexts()
    expect(renderContextSections(await app.systemPrompt.assemble())).toStrictEqual([
      { name: 'env', text: 'cwd /work' },
      { name: 'raw', text: '{{cwd}}' },
    ])
  })

  test('renderContextSections works on a preparation too', async () => {
    const app = await contexts()
    expect(renderContextSections(await app.systemPrompt.prepare())).toHaveLength(2)
  })

  test('renderContextSections returns a fresh array the caller owns', async () => {
    const app = await contexts()
    const assembly = await app.systemPrompt.assemble()
    const first = renderContextSections(assembly)
    first.length = 0
    expect(renderContextSections(assembly)).toHaveLength(2)
  })

  test('joinContextSections of nothing is the empty string', () => {
    expect(joinContextSections([])).toBe('')
  })

  test('joinContextSections puts the exact header, a blank line, then the sections separated by blank lines', () => {
    expect(RUNTIME_CONTEXT_HEADER).toBe(HEADER)
    expect(joinContextSections([{ text: 'one' }, { text: 'two' }])).toBe(`${HEADER}\n\none\n\ntwo`)
  })

  test('renderContextSnapshot joins the rendered sections under the header', async () => {
    const app = await contexts()
    const assembly = await app.systemPrompt.assemble()
    expect(renderContextSnapshot(assembly)).toBe(`${HEADER}\n\ncwd /work\n\n{{cwd}}`)
    expect(renderContextSnapshot(assembly)).toBe(joinContextSections(renderContextSections(assembly)))
  })

  test('a snapshot without contexts is the empty string', async () => {
    const app = await mount(BARE)
    expect(renderContextSnapshot(await app.systemPrompt.assemble())).toBe('')
  })

  test('a snapshot of only empty contexts is the empty string', async () => {
    const app = await mount(BARE)
    app.systemPrompt.context({ name: 'empty', order: 0, text: () => '' })
    expect(renderContextSnapshot(await app.systemPrompt.assemble())).toBe('')
  })

  test('a suppressed assembly renders only required contexts', async () => {
    const app = await contexts()
    app.systemPrompt.context({ name: 'sandbox', order: 3, text: 'sandboxed', required: true })
    app.systemPrompt.suppressRuntimeContext()
    expect(renderContextSnapshot(await app.systemPrompt.assemble())).toBe(`${HEADER}\n\nsandboxed`)
  })

  test.each<[string, string]>([
    ['{{nope}}', 'unknown prompt variable'],
    ['{{later}}', 'has no value'],
    ['{{ x }}', 'malformed prompt variable reference'],
  ])('a context %s fails with "%s", naming the context', async (text, message) => {
    const app = await mount(BARE)
    app.systemPrompt.variable('later', () => undefined)
    app.systemPrompt.context({ name: 'env', order: 0, text })
    const assembly = await app.systemPrompt.assemble()
    expect(() => renderContextSnapshot(assembly)).toThrow(message)
    expect(() => renderContextSections(assembly)).toThrow('runtime context "env"')
  })

  test('context rendering does not disturb the section render of the same assembly', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('v', 'V')
    app.systemPrompt.section({ name: 'same', order: 0, text: 'section {{v}}' })
    app.systemPrompt.context({ name: 'same', order: 0, text: 'context {{v}}' })
    const assembly = await app.systemPrompt.assemble()
    expect([renderPrompt(assembly), renderContextSnapshot(assembly), renderPrompt(assembly)]).toEqual([
      'section V',
      `${HEADER}\n\ncontext V`,
      'section V',
    ])
  })
})

describe('memoized rendering gives the same results as a fresh render', () => {
  async function withListener() {
    const app = await mount(BARE)
    app.systemPrompt.variable('who', 'registry')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A {{who}}' })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B' })
    app.systemPrompt.context({ name: 'c', order: 0, text: 'C {{who}}' })
    const rewrite = { current: undefined as undefined | ((p: PromptAssembly) => void) }
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      rewrite.current?.(presentation as PromptAssembly)
      return next()
    })
    return { app, rewrite }
  }

  /** Renders `assembly` through the memo and from a memo-less clone; both must agree. */
  function both(assembly: PromptAssembly): [string, string] {
    const memoized = `${renderPrompt(assembly)} | ${renderContextSnapshot(assembly)}`
    const copy = structuredClone(assembly)
    const fresh = `${renderPrompt(copy)} | ${renderContextSnapshot(copy)}`
    return [memoized, fresh]
  }

  test.each<[string, (p: PromptAssembly) => void, string]>([
    ['rewrites a section text', (p) => void (p.sections[0]!.text = 'A2 {{who}}'), `A2 registry\n\nB | ${HEADER}\n\nC registry`],
    ['rewrites a variable', (p) => void (p.variables.who = 'listener'), `A listener\n\nB | ${HEADER}\n\nC listener`],
    ['reorders the sections', (p) => void p.sections.reverse(), `B\n\nA registry | ${HEADER}\n\nC registry`],
    ['drops a section', (p) => void p.sections.splice(0, 1), `B | ${HEADER}\n\nC registry`],
    ['adds a section', (p) => void p.sections.push({ name: 'z', order: 9, text: 'Z' }), `A registry\n\nB\n\nZ | ${HEADER}\n\nC registry`],
    ['turns interpolation off', (p) => void (p.sections[0]!.interpolate = false), `A {{who}}\n\nB | ${HEADER}\n\nC registry`],
    ['rewrites a context', (p) => void (p.contexts[0]!.text = 'C2'), `A registry\n\nB | ${HEADER}\n\nC2`],
    ['empties a section', (p) => void (p.sections.find((section) => section.name === 'b')!.text = ''), `A registry | ${HEADER}\n\nC registry`],
  ])('after a listener %s, and again once it stops', async (_, rewrite, expected) => {
    const { app, rewrite: slot } = await withListener()
    const plain = `A registry\n\nB | ${HEADER}\n\nC registry`
    expect(both(await app.systemPrompt.assemble())).toEqual([plain, plain])
    slot.current = rewrite
    expect(both(await app.systemPrompt.assemble())).toEqual([expected, expected])
    expect(both(await app.systemPrompt.assemble())).toEqual([expected, expected])
    slot.current = undefined
    expect(both(await app.systemPrompt.assemble())).toEqual([plain, plain])
  })

  test('rendering an older assembly after a newer one gives the older text', async () => {
    const app = await mount(BARE)
    const who = signal<string | undefined>('old')
    app.systemPrompt.variable('who', who)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'Hi {{who}}' })
    const older = await app.systemPrompt.assemble()
    who.value = 'new'
    const newer = await app.systemPrompt.assemble()
    expect([renderPrompt(newer), renderPrompt(older), renderPrompt(newer)]).toEqual(['Hi new', 'Hi old', 'Hi new'])
  })

  test('mutating an assembly after rendering it shows in the next render', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('who', 'you')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'Hi {{who}}' })
    const assembly = await app.systemPrompt.assemble()
    expect(renderPrompt(assembly)).toBe('Hi you')
    assembly.variables.who = 'them'
    expect(renderPrompt(assembly)).toBe('Hi them')
    assembly.sections[0]!.text = 'Bye {{who}}'
    expect(renderPrompt(assembly)).toBe('Bye them')
    delete assembly.variables.who
    expect(() => renderPrompt(assembly)).toThrow('unknown prompt variable')
  })

  test('a failed render poisons nothing: the next render is correct', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('who', 'you')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'Hi {{who}}' })
    const assembly = await app.systemPrompt.assemble()
    expect(renderPrompt(assembly)).toBe('Hi you')
    assembly.variables.who = undefined
    expect(() => renderPrompt(assembly)).toThrow('has no value')
    assembly.variables.who = 'you'
    expect(renderPrompt(assembly)).toBe('Hi you')
  })

  test('two sections of the same name added by a listener render in their own order', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: 'first' })
    let swap = false
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      presentation.sections.push({ name: 'a', order: 1, text: 'second' })
      if (swap) presentation.sections.reverse()
      return next()
    })
    const before = await app.systemPrompt.assemble()
    swap = true
    const after = await app.systemPrompt.assemble()
    expect([renderPrompt(before), renderPrompt(after)]).toEqual(['first\n\nsecond', 'second\n\nfirst'])
  })

  test('a refreshed assembly renders its refreshed contexts', async () => {
    const app = await mount(BARE)
    const time = signal('10:00')
    app.systemPrompt.context({ name: 'time', order: 0, text: time })
    const assembly = await app.systemPrompt.assemble()
    expect(renderContextSnapshot(assembly)).toBe(`${HEADER}\n\n10:00`)
    time.value = '10:05'
    const refreshed = app.systemPrompt.refreshContext(assembly)
    expect([renderContextSnapshot(refreshed), renderContextSnapshot(assembly)]).toEqual([
      `${HEADER}\n\n10:05`,
      `${HEADER}\n\n10:00`,
    ])
  })
})
