import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { createStepSurface, parseSessionLog, serializeStep, type StepResult } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'
import { jsonl, messageLine, stepLine } from '../cli/fixtures.js'

// The session log records cacheBreak (layer as a label) and each sent part's
// length and layer, and replay returns them.

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

async function session(): Promise<StepResult[]> {
  const root = await mount(BARE)
  const key = { name: 'agent-1' }
  const scope = await mintScope(root, key)
  const branch = signal('main')
  root.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom.' })
  scope.ctx.systemPrompt.section({ name: 'env', order: 10, text: 'Branch {{branch}}, here.' })
  root.systemPrompt.variable('branch', branch)
  const surface = createStepSurface({ budget: { maxTokens: 100, countTokens: words } })
  const results: StepResult[] = []
  const step = async (): Promise<void> => void results.push(surface.step({ assembly: await root.systemPrompt.assemble({ scope: key }) }))
  await step()
  branch.value = 'dev'
  await step()
  await step()
  return results
}

describe('cacheBreak in the session log', () => {
  test('is written with its layer as a label and replayed as written', async () => {
    const results = await session()
    expect(results[1]!.cacheBreak).toEqual({ cause: 'section', section: 'env', layer: expect.objectContaining({ name: 'agent-1' }), variable: 'branch' })
    const { steps } = parseSessionLog(results.map(serializeStep).join(''))
    expect(steps.map((step) => step.cacheBreak)).toEqual([undefined, { cause: 'section', section: 'env', layer: 'agent-1', variable: 'branch' }, undefined])
    expect('cacheBreak' in steps[2]!).toBe(false)
  })

  test('each step carries its parts\' lengths, layers and (under a budget) token counts, so a reader can cut the prompt into parts', async () => {
    const results = await session()
    const { steps } = parseSessionLog(results.map(serializeStep).join(''))
    const second = steps[1]!
    expect([second.sections, second.sectionLengths, second.sectionLayers, second.sectionTokens]).toEqual([
      ['intro', 'env'],
      ['You are Loom.'.length, 'Branch dev, here.'.length],
      ['global', 'agent-1'],
      [3, 3],
    ])
    let at = 0
    const texts = second.sectionLengths!.map((length) => second.prompt.slice(at, (at += length + 2) - 2))
    expect(texts).toEqual(['You are Loom.', 'Branch dev, here.'])
  })

  test('a tools break keeps its name lists', () => {
    const tools = { added: ['grep'], removed: [], changed: ['read'] }
    const { steps } = parseSessionLog(jsonl(stepLine(1), messageLine('p', 'append'), stepLine(2, { stablePrefixLength: 1, cacheBreak: { cause: 'tools', tools } })))
    expect(steps[1]!.cacheBreak).toEqual({ cause: 'tools', tools })
  })

  test.each([
    [{ cause: 'weather' }, '"cacheBreak.cause" must be "tools" or "config" or "withheld" or "restored" or "section" or "removed" or "added" (got "weather")'],
    [{ cause: 'section', section: 3 }, '"cacheBreak.section" must be a string (got 3)'],
    [{ cause: 'tools', tools: { added: ['a'], removed: [] } }, '"cacheBreak.tools.changed" must be an array (got nothing)'],
    ['section', '"cacheBreak" must be an object with a "cause" (got "section")'],
  ])('a malformed cacheBreak is an error naming the field (%j)', (cacheBreak, message) => {
    expect(() => parseSessionLog(jsonl(stepLine(1, { cacheBreak })), 'a.jsonl')).toThrow(`session log "a.jsonl" line 1: a "step" record's ${message}`)
  })

  test('part lengths must be counts and layers strings or null', () => {
    expect(() => parseSessionLog(jsonl(stepLine(1, { sectionLengths: [1, -2] })))).toThrow('"sectionLengths[1]" must be a non-negative integer (got -2)')
    expect(() => parseSessionLog(jsonl(stepLine(1, { sectionLayers: ['global', 7] })))).toThrow('"sectionLayers[1]" must be a string or null (got 7)')
  })
})
