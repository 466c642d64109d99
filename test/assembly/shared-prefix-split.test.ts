import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { SECTION_ORDERS } from '../../src/index.js'
import { BARE, mintScope, mount } from './system-prompt.fixtures.js'

// SPEC §5 'shared-prefix-split': a section supplied by a scope layer, ordered
// before a global section whose text is not empty, ends the prefix the agent
// shares with its siblings. diagnostics() reports it live.

async function agentApp(personaSuffix = '') {
  const app = await mount({ ...BARE, personaSuffix })
  const key = { name: 'agent-1' }
  const scope = await mintScope(app, key)
  app.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom.' })
  return { app, key, sp: scope.ctx.systemPrompt }
}

const splits = (list: readonly { kind: string; entry: string; before?: string }[]) =>
  list.filter((d) => d.kind === 'shared-prefix-split').map((d) => [d.entry, d.before])

describe("diagnostics() 'shared-prefix-split'", () => {
  test('a scoped section before a global one: entry, layer, the first global section it precedes, and a message with the remedy', async () => {
    const { app, key, sp } = await agentApp()
    sp.section({ name: 'mine', order: -1, text: 'Agent words.' })
    app.systemPrompt.section({ name: 'policy', order: 5, text: 'Plan first.' })
    const found = app.systemPrompt.diagnostics(key)
    expect(found).toEqual([
      {
        kind: 'shared-prefix-split',
        entry: 'mine',
        entryKind: 'section',
        layer: key,
        before: 'intro',
        message:
          'prompt section "mine" in scope "agent-1" is ordered before global prompt section "intro", so every global section from there on is no longer part of a prefix this agent shares with its siblings (their cached prefix ends where this section starts) — order it after the global sections (e.g. at SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX or later), or register it globally',
      },
    ])
  })

  test('one finding per scoped section, in prompt order; a scoped section after every global one is none', async () => {
    const { app, key, sp } = await agentApp()
    sp.section({ name: 'a', order: 1, text: 'A.' })
    app.systemPrompt.section({ name: 'g1', order: 2, text: 'G1.' })
    sp.section({ name: 'b', order: 3, text: 'B.' })
    app.systemPrompt.section({ name: 'g2', order: 4, text: 'G2.' })
    sp.section({ name: 'c', order: 5, text: 'C.' })
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([
      ['a', 'g1'],
      ['b', 'g2'],
    ])
  })

  test('an empty persona suffix does not count; a non-empty one does', async () => {
    const quiet = await agentApp('')
    quiet.sp.section({ name: 'mine', order: 1, text: 'Agent words.' })
    expect(splits(quiet.app.systemPrompt.diagnostics(quiet.key))).toEqual([])
    const loud = await agentApp('Environment: {{cwd}}.')
    loud.sp.section({ name: 'mine', order: 1, text: 'Agent words.' })
    loud.sp.variable('cwd', '/work')
    expect(splits(loud.app.systemPrompt.diagnostics(loud.key))).toEqual([['mine', 'deployment:persona-suffix']])
  })

  test('a global function text counts as non-empty (it is never called); an empty global text is skipped to the next', async () => {
    const { app, key, sp } = await agentApp()
    sp.section({ name: 'mine', order: 1, text: 'Agent words.' })
    app.systemPrompt.section({ name: 'blank', order: 2, text: '' })
    let calls = 0
    app.systemPrompt.section({ name: 'computed', order: 3, text: () => (calls++, '') })
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([['mine', 'computed']])
    expect(calls).toBe(0)
  })

  test('kept live: a global signal text turning empty, then the global section going away, clears the finding', async () => {
    const { app, key, sp } = await agentApp()
    const text = signal('Late words.')
    sp.section({ name: 'mine', order: SECTION_ORDERS.TOOL_GUIDANCE, text: 'Agent words.' })
    const dispose = app.systemPrompt.section({ name: 'late', order: SECTION_ORDERS.WEB_SURFACE, text })
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([['mine', 'late']])
    text.value = ''
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([])
    text.value = 'Back.'
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([['mine', 'late']])
    dispose()
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([])
  })

  test('a scoped section shadowing a global one of the same name splits at the next global section; the global view has none', async () => {
    const { app, key, sp } = await agentApp()
    sp.section({ name: 'intro', order: 0, text: 'You review code.' })
    app.systemPrompt.section({ name: 'policy', order: 5, text: 'Plan first.' })
    expect(splits(app.systemPrompt.diagnostics(key))).toEqual([['intro', 'policy']])
    expect(splits(app.systemPrompt.diagnostics())).toEqual([])
  })
})
