import { describe, expect, test } from 'vitest'
import { render } from '../../src/index.js'
import { BARE, mount } from './system-prompt.fixtures.js'

// With nobody listening to the assemble waterfall, a result's `sections` is an
// own enumerable accessor whose getter and setter every result shares; the
// result's own state sits under a non-enumerable symbol (src/assembly/presentation.ts).

async function assembled() {
  const app = await mount(BARE)
  app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.' })
  app.systemPrompt.section({ name: 'tail', order: 10, text: 'Bye.' })
  return { app, assembly: await app.systemPrompt.assemble() }
}

describe('deferred sections of an assemble() result', () => {
  test('every result shares one getter and one setter, and lists only its four fields', async () => {
    const a = (await assembled()).assembly
    const b = (await assembled()).assembly
    const [da, db] = [Object.getOwnPropertyDescriptor(a, 'sections')!, Object.getOwnPropertyDescriptor(b, 'sections')!]
    expect(da.get).toBeTypeOf('function')
    expect(da.get).toBe(db.get)
    expect(da.set).toBe(db.set)
    expect(Object.keys(a)).toEqual(['sections', 'contexts', 'variables', 'tools'])
    expect({ ...a }).toEqual({ sections: a.sections, contexts: a.contexts, variables: a.variables, tools: a.tools })
    expect(a.sections.map((section) => section.name).filter((name) => !name.startsWith('deployment:'))).toEqual(['intro', 'tail'])
  })

  test('a proxy, an heir and a copy made from its descriptors read the same sections; an unrelated receiver gets a TypeError', async () => {
    const { assembly } = await assembled()
    expect(new Proxy(assembly, {}).sections).toBe(assembly.sections)
    expect((Object.create(assembly) as typeof assembly).sections).toBe(assembly.sections)
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(assembly)) as typeof assembly
    expect(copy.sections).toBe(assembly.sections)
    expect(() => Reflect.get(assembly, 'sections', {})).toThrow(TypeError)
    expect(() => Reflect.get(assembly, 'sections', {})).toThrow('read "sections" from the object assemble() returned')
  })

  test('an assigned array is the sections from then on, and the render follows it', async () => {
    const { assembly } = await assembled()
    assembly.sections = [{ name: 'only', order: 0, text: 'Replaced.' }]
    expect(assembly.sections.map((section) => section.name)).toEqual(['only'])
    expect(render(assembly).text).toBe('Replaced.')
  })

  test('a frozen result refuses an assignment as a frozen data property would', async () => {
    const { assembly } = await assembled()
    Object.freeze(assembly)
    expect(() => {
      assembly.sections = []
    }).toThrow("Cannot assign to read only property 'sections'")
    expect(render(assembly).text).toBe('Hello.\n\nBye.')
  })
})
