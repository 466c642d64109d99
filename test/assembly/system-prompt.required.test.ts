import { describe, expect, test } from 'vitest'
import { createStepSurface, render, type AssembledSection, type PromptPresentation } from '../../src/index.js'
import { BARE, mintScope, mount, names, ownSections } from './system-prompt.fixtures.js'

// SPEC §5 "Required sections": after the system-prompt/assemble waterfall every
// effective required section is back, with its collected text, in registry
// order among the required ones, around the listener's own order.

type Rewrite = (sections: AssembledSection[]) => AssembledSection[]

async function world(rewrite?: Rewrite) {
  const app = await mount(BARE)
  const sp = app.systemPrompt
  sp.section({ name: 'a', order: 1, text: 'A' })
  sp.section({ name: 'r1', order: 2, text: 'R1 protocol', required: true })
  sp.section({ name: 'b', order: 3, text: 'B' })
  sp.section({ name: 'r2', order: 4, text: 'R2 protocol', required: true })
  sp.section({ name: 'c', order: 5, text: 'C' })
  if (rewrite !== undefined) {
    app.on('system-prompt/assemble', async (presentation: PromptPresentation, _context, next) => {
      const p = await next()
      return { ...p, sections: rewrite(presentation.sections) }
    })
  }
  return app
}

const own = async (rewrite?: Rewrite) => {
  const app = await world(rewrite)
  const assembly = await app.systemPrompt.assemble()
  return { app, assembly, names: names(ownSections(assembly)) }
}

describe('required sections after the assemble waterfall', () => {
  test('without a listener the assembly is the registry order, unchanged', async () => {
    expect((await own()).names).toEqual(['a', 'r1', 'b', 'r2', 'c'])
  })

  test('a dropped required section returns where it was relative to its registry neighbours', async () => {
    const { names: got } = await own((sections) => sections.filter((s) => s.name !== 'r1'))
    expect(got).toEqual(['a', 'r1', 'b', 'r2', 'c'])
  })

  test('dropping every section leaves the required ones, in registry order', async () => {
    const { assembly } = await own(() => [])
    expect(assembly.sections.map((s) => [s.name, s.text])).toEqual([
      ['r1', 'R1 protocol'],
      ['r2', 'R2 protocol'],
    ])
  })

  test('an edited required section gets its collected text back (in place edits too)', async () => {
    const { assembly } = await own((sections) => {
      sections.find((s) => s.name === 'r2')!.text = 'hacked in place'
      return sections.map((s) => (s.name === 'r1' ? { ...s, text: 'replaced' } : s))
    })
    const texts = Object.fromEntries(assembly.sections.map((s) => [s.name, s.text]))
    expect([texts.r1, texts.r2]).toEqual(['R1 protocol', 'R2 protocol'])
  })

  test('a listener that reorders its other sections keeps their order around the required ones', async () => {
    // c and b moved to the front: b sat after r1, so r1 goes before it; r2 still follows r1.
    const { names: got } = await own((sections) => {
      const by = new Map(sections.map((s) => [s.name, s]))
      return ['c', 'b', 'a'].map((n) => by.get(n)!)
    })
    expect(got).toEqual(['r1', 'r2', 'c', 'b', 'a'])
  })

  test('required sections moved out of registry order are put back in it', async () => {
    const { names: got } = await own((sections) => {
      const by = new Map(sections.map((s) => [s.name, s]))
      return ['r2', 'a', 'r1', 'b', 'c'].map((n) => by.get(n)!)
    })
    // r2 is placed first, so r1 goes right before it; the later copy of r1 is dropped.
    expect(got).toEqual(['r1', 'r2', 'a', 'b', 'c'])
  })

  test('a required section the listener kept verbatim stays where the listener put it', async () => {
    const { names: got } = await own((sections) => {
      const by = new Map(sections.map((s) => [s.name, s]))
      return ['a', 'b', 'r1', 'c', 'r2'].map((n) => by.get(n)!)
    })
    expect(got).toEqual(['a', 'b', 'r1', 'c', 'r2'])
  })

  test("a listener's own sections stay where it put them", async () => {
    const { names: got } = await own((sections) => [
      { name: 'first', text: 'F' },
      ...sections.filter((s) => !s.name.startsWith('r')),
      { name: 'last', text: 'L' },
    ])
    expect(got).toEqual(['first', 'a', 'r1', 'b', 'r2', 'c', 'last'])
  })

  test('a duplicate copy of a required section is dropped', async () => {
    const { names: got } = await own((sections) => [...sections, { name: 'r1', text: 'again' }])
    expect(got).toEqual(['a', 'r1', 'b', 'r2', 'c'])
  })

  test('a complete section keeps the required ones beside it, in registry order', async () => {
    const app = await world((sections) => sections.slice(0, 1))
    app.systemPrompt.section({ name: 'whole', order: 3.5, text: 'WHOLE', complete: true })
    const assembly = await app.systemPrompt.assemble()
    expect(names(assembly.sections)).toEqual(['r1', 'whole', 'r2'])
  })

  test('a scoped required section shadows the global one and is restored in its scope', async () => {
    const app = await world(() => [])
    const key = { name: 'agent-1' }
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.section({ name: 'r1', order: 2, text: 'scoped R1', required: true })
    const assembly = await app.systemPrompt.assemble({ scope: key })
    expect(assembly.sections.map((s) => s.text)).toEqual(['scoped R1', 'R2 protocol'])
    expect(render(assembly).parts.map((p) => [p.name, p.layer])).toEqual([
      ['r1', key],
      ['r2', 'global'],
    ])
  })

  test('an untouched presentation keeps the listener result array itself (no copy on the hot path)', async () => {
    let returned: AssembledSection[] | undefined
    const app = await world()
    app.on('system-prompt/assemble', async (_presentation, _context, next) => {
      const p = await next()
      returned = p.sections
      return p
    })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.sections).toBe(returned)
  })
})

describe('restored required sections in the rendered prompt', () => {
  test("restored parts say restored: true, keep origin 'registry' and required: true", async () => {
    const { assembly } = await own((sections) => sections.filter((s) => s.name !== 'r2'))
    const parts = render(assembly).parts.filter((p) => p.name.length <= 2)
    expect(parts.map((p) => [p.name, p.required, p.restored, p.origin])).toEqual([
      ['a', false, false, 'registry'],
      ['r1', true, false, 'registry'],
      ['b', false, false, 'registry'],
      ['r2', true, true, 'registry'],
      ['c', false, false, 'registry'],
    ])
  })

  test('the next assembly without the hostile rewrite renders restored: false (the render memo keys on it)', async () => {
    let hostile = true
    const { app } = await own((sections) => (hostile ? sections.filter((s) => s.name !== 'r1') : sections))
    const first = render(await app.systemPrompt.assemble())
    hostile = false
    const second = render(await app.systemPrompt.assemble())
    expect(first.parts.find((p) => p.name === 'r1')!.restored).toBe(true)
    expect(second.parts.find((p) => p.name === 'r1')!.restored).toBe(false)
    expect(second.text).toBe(first.text)
  })

  test('the step surface warns once per surface, naming the section and its layer', async () => {
    const { app } = await own((sections) => sections.filter((s) => s.name !== 'r1'))
    const surface = createStepSurface()
    const first = surface.step({ assembly: await app.systemPrompt.assemble() })
    const second = surface.step({ assembly: await app.systemPrompt.assemble() })
    expect(first.warnings.filter((w) => w.kind === 'required-restored')).toEqual([
      {
        kind: 'required-restored',
        section: 'r1',
        layer: 'global',
        message: expect.stringContaining('required prompt section "r1" in the global layer was restored after the "system-prompt/assemble" waterfall'),
      },
    ])
    expect(second.warnings).toEqual([])
  })

  test('a scoped restored section is warned about with its scope', async () => {
    const app = await world(() => [])
    const key = { name: 'agent-1' }
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.section({ name: 'r9', order: 9, text: 'mine', required: true })
    const warnings = createStepSurface().step({ assembly: await app.systemPrompt.assemble({ scope: key }) }).warnings
    expect(warnings.flatMap((w) => ('section' in w ? [[w.section, w.layer]] : []))).toEqual([
      ['r1', 'global'],
      ['r2', 'global'],
      ['r9', key],
    ])
    expect(warnings[2]!.message).toContain('required prompt section "r9" in scope "agent-1" was restored')
  })
})

describe('inspect() and required entries', () => {
  test('a required section carries required: true; other sections and every context carry nothing', async () => {
    const app = await world()
    app.systemPrompt.context({ name: 'env', order: 1, text: 'E', required: true })
    app.systemPrompt.context({ name: 'note', order: 2, text: 'N' })
    const inspection = app.systemPrompt.inspect()
    expect(inspection.sections.filter((e) => e.name.length <= 2)).toEqual([
      { name: 'a', layer: 'global', shadows: [] },
      { name: 'r1', layer: 'global', shadows: [], required: true },
      { name: 'b', layer: 'global', shadows: [] },
      { name: 'r2', layer: 'global', shadows: [], required: true },
      { name: 'c', layer: 'global', shadows: [] },
    ])
    expect(inspection.contexts).toEqual([
      { name: 'env', layer: 'global', shadows: [] },
      { name: 'note', layer: 'global', shadows: [] },
    ])
  })
})
