import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { isCollected } from './collect.js'
import { render, type RenderedPrompt } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// A RenderedPrompt reuses the unchanged parts of the prompt before it, but must
// not keep that prompt: a loop that reads only `text` would otherwise keep a
// chain of every prompt it ever rendered (each one holding its joined text).

const collected = (ref: WeakRef<object>): Promise<boolean> => isCollected(ref, 10)

/** An app whose one volatile section changes every step, and a step that renders it and reads `read`. */
async function loop(): Promise<(read: 'text' | 'blocks') => Promise<RenderedPrompt>> {
  const app = await mount(BARE)
  const notes = signal('note 0')
  app.systemPrompt.section({ name: 'intro', order: 0, text: 'A stable introduction.', cacheBreakpoint: true })
  app.systemPrompt.section({ name: 'notes', order: 10, text: notes, stability: 'volatile' })
  let turn = 0
  return async (read) => {
    notes.value = `note ${++turn}`
    const rendered = render(await app.systemPrompt.assemble())
    void (read === 'text' ? rendered.text : rendered.blocks)
    return rendered
  }
}

describe('a rendered prompt does not keep the one before it', () => {
  test('a loop reading only text lets every earlier prompt go', async () => {
    const step = await loop()
    const first = new WeakRef(await step('text'))
    const kept: RenderedPrompt[] = []
    for (let i = 0; i < 3; i++) kept.push(await step('text'))
    expect(await collected(first)).toBe(true)
    expect(kept[2]!.text).toContain('note 4')
  })

  test('a loop reading blocks gets the unchanged block again and still lets the earlier prompt go', async () => {
    const step = await loop()
    // The earlier prompt is only held weakly here (its first block is kept, through `stable` and `next`).
    const { ref, stable } = await (async () => {
      const earlier = await step('blocks')
      return { ref: new WeakRef(earlier), stable: earlier.blocks[0]! }
    })()
    const next = await step('blocks')
    expect(next.blocks[0]).toEqual(stable)
    expect(next.blocks[1]!.text).toBe('note 2')
    expect(await collected(ref)).toBe(true)
  })
})
