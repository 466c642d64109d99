import { signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import { render } from '../../src/index.js'
import { builtSoFar } from '../../src/render/rendered-prompt.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

describe('render(assembly): parts built on first read', () => {
  test('a prompt read only for its text builds no parts; read later, its parts and variables are those of its own step', async () => {
    const app = await mount(BARE)
    const cwd = signal('/a')
    app.systemPrompt.variable('cwd', cwd)
    app.systemPrompt.section({ name: 'fixed', order: 0, text: 'Fixed.' })
    app.systemPrompt.section({ name: 'env', order: 1, text: 'In {{cwd}}.' })
    const assembly = await app.systemPrompt.assemble()
    const first = render(assembly)
    expect(first.text).toBe('Fixed.\n\nIn /a.')
    expect(builtSoFar(first).parts).toBeUndefined()
    // The values the parts are built from are fixed at render: a later write to the result changes nothing.
    assembly.variables.cwd = '/elsewhere'
    cwd.value = '/b'
    const second = render(await app.systemPrompt.assemble())
    expect(second.text).toBe('Fixed.\n\nIn /b.')
    expect(first.parts.map((part) => part.text)).toEqual(['Fixed.', 'In /a.'])
    expect(first.parts[1]!.substitutions).toEqual([{ variable: 'cwd', start: 3, end: 5 }])
    expect(first.variables).toEqual([{ name: 'cwd', layer: 'global', stability: 'session' }])
    expect(second.parts[1]).toMatchObject({ text: 'In /b.', start: 8, end: 14 })
  })

  test('a prompt read only for its blocks (a provider request) builds no parts; its blocks are those its parts give', async () => {
    const app = await mount(BARE)
    const note = signal('one')
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Policy.', stability: 'static', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'env', order: 1, text: 'Env.' })
    app.systemPrompt.section({ name: 'note', order: 2, text: note, stability: 'volatile' })
    const first = render(await app.systemPrompt.assemble())
    const blocks = first.blocks
    expect(builtSoFar(first).parts).toBeUndefined()
    expect(blocks).toEqual([
      { text: 'Policy.', parts: ['policy'], stability: 'static', cacheBreakpoint: true },
      { text: 'Env.', parts: ['env'], stability: 'session', cacheBreakpoint: true },
      { text: 'one', parts: ['note'], stability: 'volatile', cacheBreakpoint: false },
    ])
    note.value = 'two'
    const second = render(await app.systemPrompt.assemble())
    // The unchanged blocks are the first prompt's, text and all; only the volatile one is new.
    expect(second.blocks[0]).toBe(blocks[0])
    expect(second.blocks[1]).toBe(blocks[1])
    expect(second.blocks[2]!.text).toBe('two')
    expect(builtSoFar(second).parts).toBeUndefined()
    // Parts read afterwards agree with the blocks.
    expect(second.parts.map((part) => [part.name, part.stability, part.cacheBreakpoint])).toEqual([
      ['policy', 'static', true],
      ['env', 'session', false],
      ['note', 'volatile', false],
    ])
  })

  test('a prompt after one whose parts were read reuses its unchanged parts and blocks; after an unread one it builds them afresh', async () => {
    const app = await mount(BARE)
    const note = signal('one')
    app.systemPrompt.section({ name: 'fixed', order: 0, text: 'Fixed.', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'note', order: 1, text: note, stability: 'volatile' })
    const first = render(await app.systemPrompt.assemble())
    void first.blocks
    note.value = 'two'
    const second = render(await app.systemPrompt.assemble())
    expect(second.parts[0]).toBe(first.parts[0])
    expect(second.blocks[0]).toBe(first.blocks[0])
    note.value = 'three'
    const third = render(await app.systemPrompt.assemble())
    void third.text
    note.value = 'four'
    const fourth = render(await app.systemPrompt.assemble())
    // The third built nothing, so the fourth had nothing to reuse: equal parts and blocks, new objects.
    expect(builtSoFar(third)).toEqual({ parts: undefined, variables: undefined, blocks: undefined })
    expect(fourth.parts[0]).toEqual(second.parts[0])
    expect(fourth.blocks[0]).toEqual(second.blocks[0])
    expect(fourth.blocks.map((block) => block.text)).toEqual(['Fixed.', 'four'])
  })
})

describe('render(assembly): a changed step', () => {
  test('keeps the parts before the change as they are and re-checks no substituted value the memo knows did not change', async () => {
    const app = await mount(BARE)
    const x = signal('x1')
    app.systemPrompt.variable('x', x)
    app.systemPrompt.variable('y', 'y1')
    const tail = signal('C1')
    app.systemPrompt.section({ name: 'a', order: 0, text: 'A {{x}}' })
    app.systemPrompt.section({ name: 'b', order: 1, text: 'B {{y}}' })
    app.systemPrompt.section({ name: 'c', order: 2, text: tail })
    const first = render(await app.systemPrompt.assemble())
    void first.blocks
    tail.value = 'C2'
    x.value = 'x2'
    const assembly = await app.systemPrompt.assemble()
    const startsWith = vi.spyOn(String.prototype, 'startsWith')
    let second: ReturnType<typeof render>
    try {
      second = render(assembly)
      void second.blocks
      // a was re-filled (new part), b kept without reading its value again, c re-rendered.
      expect(second.parts.map((part) => part.text)).toEqual(['A x2', 'B y1', 'C2'])
      expect(second.parts[1]).toBe(first.parts[1])
      expect(second.parts[0]!.substitutions).toEqual([{ variable: 'x', start: 2, end: 4 }])
      expect(startsWith).not.toHaveBeenCalled()
    } finally {
      startsWith.mockRestore()
    }
    tail.value = 'C3'
    const third = render(await app.systemPrompt.assemble())
    // Only the last section changed: the parts and the block before it are the second's objects.
    expect(third.parts[0]).toBe(second.parts[0])
    expect(third.parts[1]).toBe(second.parts[1])
    expect(third.parts[2]!.text).toBe('C3')
  })
})
