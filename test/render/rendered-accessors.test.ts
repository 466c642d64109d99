import { describe, expect, test } from 'vitest'
import { render } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// A RenderedPrompt's `text` and `blocks` are own enumerable accessors with
// getters shared by every prompt (docs/design.md, "Rendering").

async function rendered() {
  const app = await mount(BARE)
  app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.', cacheBreakpoint: true })
  app.systemPrompt.section({ name: 'tail', order: 10, text: 'Bye.' })
  return render(await app.systemPrompt.assemble())
}

describe('RenderedPrompt accessors', () => {
  test('spread, JSON and structuredClone read text and blocks like data', async () => {
    const prompt = await rendered()
    const data = { text: 'Hello.\n\nBye.', parts: prompt.parts, blocks: prompt.blocks, variables: [] }
    expect({ ...prompt }).toEqual(data)
    expect(JSON.parse(JSON.stringify(prompt))).toEqual(JSON.parse(JSON.stringify(data)))
    expect(structuredClone(prompt)).toEqual(data)
    expect(Object.keys(prompt)).toEqual(['text', 'parts', 'blocks', 'variables'])
    expect(Object.isFrozen(prompt)).toBe(true)
  })

  test('every prompt shares one getter per accessor, and an object inheriting from a prompt reads its fields', async () => {
    const a = await rendered()
    const b = await rendered()
    expect(Object.getOwnPropertyDescriptor(a, 'text')!.get).toBe(Object.getOwnPropertyDescriptor(b, 'text')!.get)
    const heir = Object.create(a) as typeof a
    expect(heir.text).toBe('Hello.\n\nBye.')
    expect(heir.blocks).toBe(a.blocks)
  })

  test('a proxy around a prompt reads through; an unrelated receiver gets a TypeError saying where to read from', async () => {
    const prompt = await rendered()
    expect(new Proxy(prompt, {}).text).toBe('Hello.\n\nBye.')
    expect(new Proxy(prompt, {}).blocks).toBe(prompt.blocks)
    expect(() => Reflect.get(prompt, 'blocks', {})).toThrow(TypeError)
    expect(() => Reflect.get(prompt, 'text', {})).toThrow('read "text", "parts", "blocks" and "variables" from the object render() returned')
  })
})
