import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { render } from '../../src/index.js'
import { BARE, family, mount } from '../assembly/system-prompt.fixtures.js'

/**
 * Two agents whose prompts have two multi-part blocks: a stable one (the
 * shared head, up to a breakpoint) and one that changes with each agent's
 * `notes` signal.
 */
async function twoAgents() {
  const app = await mount(BARE)
  const { keys, scopes } = await family(app)
  app.systemPrompt.section({ name: 'head-1', order: 0, text: 'The stable head.' })
  app.systemPrompt.section({ name: 'head-2', order: 1, text: 'It ends at a breakpoint.', cacheBreakpoint: true })
  app.systemPrompt.section({ name: 'tail-1', order: 10, text: 'The tail starts here.' })
  const notes = { agent: signal('A, first note.'), agent2: signal('B, first note.') }
  scopes.agent.ctx.systemPrompt.section({ name: 'notes', order: 20, text: notes.agent })
  scopes.agent2.ctx.systemPrompt.section({ name: 'notes', order: 20, text: notes.agent2 })
  const step = async (who: 'agent' | 'agent2') => render(await app.systemPrompt.assemble({ scope: keys[who] }))
  return { notes, step }
}

describe('cache block texts', () => {
  test('a block is plain data: its text is its parts joined, an own property, also after other prompts were built', async () => {
    const { notes, step } = await twoAgents()
    const first = await step('agent')
    const texts = first.blocks.map((block) => block.text)
    expect(texts).toEqual(['The stable head.\n\nIt ends at a breakpoint.', 'The tail starts here.\n\nA, first note.'])
    expect(Object.getOwnPropertyDescriptor(first.blocks[1]!, 'text')).toMatchObject({ value: texts[1], writable: false })
    notes.agent2.value = 'B, second note.'
    const other = await step('agent2')
    expect(other.blocks.map((block) => block.text).join('\n\n')).toBe(other.text)
    expect(first.blocks.map((block) => block.text)).toEqual(texts)
  })

  test('spread, JSON and structuredClone give the fields as plain data, in the order of the interface', async () => {
    const { step } = await twoAgents()
    const [block] = (await step('agent')).blocks
    const plain = { text: 'The stable head.\n\nIt ends at a breakpoint.', parts: ['head-1', 'head-2'], stability: 'session', cacheBreakpoint: true }
    expect(Object.keys(block!)).toEqual(['text', 'parts', 'stability', 'cacheBreakpoint'])
    expect({ ...block }).toEqual(plain)
    expect(JSON.parse(JSON.stringify(block))).toEqual(plain)
    expect(structuredClone(block)).toEqual(plain)
    expect(Object.isFrozen(block)).toBe(true)
  })
})
