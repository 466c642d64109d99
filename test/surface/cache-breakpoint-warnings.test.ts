import { describe, expect, test } from 'vitest'
import { createStepSurface, render } from '../../src/index.js'
import { BARE, family, mount } from '../assembly/system-prompt.fixtures.js'

// SPEC §4.1 / §5: a cacheBreakpoint section at or after the first volatile one gets no marker;
// diagnostics() and the step surface's warnings say so, naming the section and its layer.

describe("'breakpoint-after-volatile'", () => {
  test('diagnostics() reports each cacheBreakpoint section ordered at or after a volatile one, with its layer', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Policy.', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'clock', order: 10, text: () => 'Now.', stability: 'volatile', cacheBreakpoint: true })
    scopes.agent.ctx.systemPrompt.section({ name: 'notes', order: 20, text: 'Notes.', cacheBreakpoint: true })
    const findings = app.systemPrompt.diagnostics(keys.agent).filter((d) => d.kind === 'breakpoint-after-volatile')
    expect(findings.map(({ entry, layer, entryKind }) => ({ entry, layer, entryKind }))).toEqual([
      { entry: 'clock', layer: 'global', entryKind: 'section' },
      { entry: 'notes', layer: keys.agent, entryKind: 'section' },
    ])
    expect(findings[1]!.message).toMatch(/^prompt section "notes" in scope .* has cacheBreakpoint: true but is ordered after volatile prompt section "clock"; no cache marker/)
    expect(findings[0]!.message).toContain('is itself volatile')
  })

  test('diagnostics() finds nothing when every cacheBreakpoint section precedes the first volatile one', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'policy', order: 0, text: 'Policy.', cacheBreakpoint: true })
    app.systemPrompt.section({ name: 'clock', order: 10, text: () => 'Now.', stability: 'volatile' })
    expect(app.systemPrompt.diagnostics()).toEqual([])
  })

  test('the step surface warns once per section, naming it and its layer; the request carries no marker there', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'clock', order: 10, text: () => `Now ${Date.now()}.`, stability: 'volatile' })
    scopes.agent.ctx.systemPrompt.section({ name: 'notes', order: 20, text: 'Notes.', cacheBreakpoint: true })
    const surface = createStepSurface()
    const first = surface.step({ assembly: await app.systemPrompt.assemble({ scope: keys.agent }) })
    expect(first.warnings.filter((w) => w.kind === 'breakpoint-after-volatile')).toEqual([
      { kind: 'breakpoint-after-volatile', section: 'notes', layer: keys.agent, message: expect.stringContaining('prompt section "notes" in scope') },
    ])
    expect(first.rendered.blocks.map((block) => block.cacheBreakpoint)).toEqual([false, false])
    const second = surface.step({ assembly: await app.systemPrompt.assemble({ scope: keys.agent }) })
    expect(second.warnings.filter((w) => w.kind === 'breakpoint-after-volatile')).toEqual([])
    expect(render(await app.systemPrompt.assemble({ scope: keys.agent })).blocks.some((block) => block.cacheBreakpoint)).toBe(false)
  })
})
