import { inspect } from 'node:util'
import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { render } from '../../src/index.js'
import { BARE, family, mount } from '../assembly/system-prompt.fixtures.js'

describe('render(assembly): plain results', () => {
  test('a prompt holds the values of its own step: a later write to the result or a new value changes nothing in it', async () => {
    const app = await mount(BARE)
    const cwd = signal('/a')
    app.systemPrompt.variable('cwd', cwd)
    app.systemPrompt.section({ name: 'fixed', order: 0, text: 'Fixed.' })
    app.systemPrompt.section({ name: 'env', order: 1, text: 'In {{cwd}}.' })
    const assembly = await app.systemPrompt.assemble()
    const first = render(assembly)
    assembly.variables.cwd = '/elsewhere'
    cwd.value = '/b'
    const second = render(await app.systemPrompt.assemble())
    expect(second.text).toBe('Fixed.\n\nIn /b.')
    expect(first.text).toBe('Fixed.\n\nIn /a.')
    expect(first.parts.map((part) => part.text)).toEqual(['Fixed.', 'In /a.'])
    expect(first.parts[1]!.substitutions).toEqual([{ variable: 'cwd', start: 3, end: 5 }])
    expect(first.variables).toEqual([{ name: 'cwd', layer: 'global', stability: 'session' }])
    expect(second.parts[1]).toMatchObject({ text: 'In /b.', start: 8, end: 14 })
  })

  test('util.inspect, JSON and a spread show text, parts, blocks and variables as data (no getters)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'tail', order: 10, text: 'Bye.' })
    const prompt = render(await app.systemPrompt.assemble())
    const shown = inspect(prompt, { depth: 4 })
    expect(shown).not.toContain('Getter')
    expect(shown).toContain("text: 'Hello.\\n\\nBye.'")
    expect(shown).toContain("name: 'intro'")
    expect(shown).toContain("parts: [ 'intro' ]")
    expect(Object.keys(prompt)).toEqual(['text', 'parts', 'blocks', 'variables'])
    const data = { text: 'Hello.\n\nBye.', parts: prompt.parts, blocks: prompt.blocks, variables: [] }
    expect({ ...prompt }).toEqual(data)
    expect(JSON.parse(JSON.stringify(prompt))).toEqual(JSON.parse(JSON.stringify(data)))
    expect(structuredClone(prompt)).toEqual(data)
    expect(Object.values(Object.getOwnPropertyDescriptors(prompt)).every((d) => 'value' in d)).toBe(true)
    expect(Object.isFrozen(prompt)).toBe(true)
  })
})

describe('render(assembly): a changed step', () => {
  test('keeps the parts before the change as the same objects; the changed and later parts are new', async () => {
    const app = await mount(BARE)
    const x = signal('x1')
    app.systemPrompt.variable('x', x)
    app.systemPrompt.variable('y', 'y1')
    const tail = signal('C1')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A {{x}}' })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B {{y}}' })
    app.systemPrompt.section({ name: 'c', order: 2, text: tail })
    const first = render(await app.systemPrompt.assemble())
    tail.value = 'C2'
    x.value = 'x2'
    const second = render(await app.systemPrompt.assemble())
    expect(second.parts.map((part) => part.text)).toEqual(['A x2', 'B y1', 'C2'])
    // a was re-filled with a value of the same length: b keeps its offset and its object.
    expect(second.parts[1]).toBe(first.parts[1])
    expect(second.parts[0]!.substitutions).toEqual([{ variable: 'x', start: 2, end: 4 }])
    tail.value = 'C3'
    const third = render(await app.systemPrompt.assemble())
    expect(third.parts[0]).toBe(second.parts[0])
    expect(third.parts[1]).toBe(second.parts[1])
    expect(third.parts[2]!.text).toBe('C3')
  })

  test('an unchanged step returns the same prompt object; blocks follow the parts', async () => {
    const app = await mount(BARE)
    const note = signal('one')
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Policy.', stability: 'static', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'env', order: 1, text: 'Env.' })
    app.systemPrompt.section({ name: 'note', order: 2, text: note, stability: 'volatile' })
    const first = render(await app.systemPrompt.assemble())
    expect(render(await app.systemPrompt.assemble())).toBe(first)
    expect(first.blocks).toEqual([
      { text: 'Policy.', parts: ['policy'], stability: 'static', cacheBreakpoint: true },
      { text: 'Env.', parts: ['env'], stability: 'session', cacheBreakpoint: true },
      { text: 'one', parts: ['note'], stability: 'volatile', cacheBreakpoint: false },
    ])
    note.value = 'two'
    const second = render(await app.systemPrompt.assemble())
    expect(second.blocks[2]!.text).toBe('two')
    expect(second.parts.slice(0, 2)).toEqual(first.parts.slice(0, 2))
    expect(second.parts[0]).toBe(first.parts[0])
  })

  test('an assigned sections array is what renders, and a frozen result renders as it is', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.' })
    app.systemPrompt.section({ name: 'tail', order: 10, text: 'Bye.' })
    const assembly = await app.systemPrompt.assemble()
    expect(Object.keys(assembly)).toEqual(['sections', 'contexts', 'variables', 'tools'])
    assembly.sections = [{ name: 'only', order: 0, text: 'Replaced.' }]
    expect(render(assembly).text).toBe('Replaced.')
    const frozen = Object.freeze(await app.systemPrompt.assemble())
    expect(render(frozen).text).toBe('Hello.\n\nBye.')
  })
})

describe('render(assembly): scopes that share a global section', () => {
  test('hold one part for it when it lands at the same offset with the same label, and their own part when the offset differs', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'rules', order: 10, text: 'Be brief.' })
    scopes.agent.ctx.systemPrompt.section({ name: 'role', order: 0, text: 'Agent A.' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'role', order: 0, text: 'Agent B.' })
    scopes.sub.ctx.systemPrompt.section({ name: 'role', order: 0, text: 'The sub-agent.' })
    const a = render(await app.systemPrompt.assemble({ scope: keys.agent }))
    const b = render(await app.systemPrompt.assemble({ scope: keys.agent2 }))
    const sub = render(await app.systemPrompt.assemble({ scope: keys.sub }))
    expect(b.parts[1]).toBe(a.parts[1])
    expect(b.parts[0]).not.toBe(a.parts[0])
    expect(sub.parts[1]).not.toBe(a.parts[1])
    expect(sub.parts[1]).toMatchObject({ name: 'rules', text: 'Be brief.', start: 16, layer: 'global' })
  })
})
