import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import {
  bindScopeParent,
  renderContextSnapshot,
  renderPrompt,
  type PromptStats,
  type ToolProviderResult,
} from '../../src/index.js'
import { BARE, family, mintScope, mount, tool } from './system-prompt.fixtures.js'

/** Runs `action` and returns how much each counter moved. */
async function delta(app: Context, action: () => unknown): Promise<PromptStats> {
  const before = app.systemPrompt.stats()
  await action()
  const after = app.systemPrompt.stats()
  return Object.fromEntries(
    Object.entries(after).map(([key, value]) => [key, value - before[key as keyof PromptStats]]),
  ) as unknown as PromptStats
}

function sectionNamesOf(assembly: { sections: readonly { name: string }[] }): string[] {
  return assembly.sections.map((section) => section.name)
}

async function assembleAndRender(app: Context, scope?: object): Promise<string> {
  return renderPrompt(await app.systemPrompt.assemble({ scope }))
}

describe('stats()', () => {
  test('starts at zero', async () => {
    const app = await mount()
    expect(app.systemPrompt.stats()).toEqual({
      assemblies: 0,
      structureRecomputes: 0,
      providerEvaluations: 0,
      sectionRenders: 0,
      renderCacheHits: 0,
      toolClones: 0,
      changeEvents: 0,
    })
  })

  test('returns a snapshot the caller owns', async () => {
    const app = await mount()
    const stats = app.systemPrompt.stats()
    stats.assemblies = 99
    expect(app.systemPrompt.stats().assemblies).toBe(0)
  })

  test('counts assemble() calls, not prepare() calls', async () => {
    const app = await mount()
    const moved = await delta(app, async () => {
      await app.systemPrompt.assemble()
      await app.systemPrompt.prepare()
      await app.systemPrompt.assemble({}, await app.systemPrompt.prepare())
    })
    expect(moved.assemblies).toBe(2)
  })
})

describe('structure memoization', () => {
  test('the first assembly of a scope derives its structure', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).structureRecomputes).toBeGreaterThan(0)
  })

  test('a repeated assembly of an unchanged scope recomputes no structure', async () => {
    const app = await mount()
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'g', order: 0, text: 'G' })
    scopes.preset.ctx.systemPrompt.context({ name: 'c', order: 0, text: 'C' })
    scopes.agent.ctx.systemPrompt.variable('v', () => 'V')
    scopes.sub.ctx.systemPrompt.tools(() => ({ schemas: [tool('bash')] }))
    await app.systemPrompt.assemble({ scope: keys.sub })
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.sub }))).structureRecomputes).toBe(0)
  })

  test('a new value of a signal text recomputes no structure', async () => {
    const app = await mount(BARE)
    const text = signal('a')
    app.systemPrompt.section({ name: 's', order: 0, text })
    await app.systemPrompt.assemble()
    text.value = 'b'
    expect((await delta(app, () => app.systemPrompt.assemble())).structureRecomputes).toBe(0)
  })

  test('registering a section in a scope re-derives only that scope’s sections', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    await app.systemPrompt.assemble({ scope: keys.agent })
    scopes.agent.ctx.systemPrompt.section({ name: 'b', order: 1, text: 'B' })
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).structureRecomputes).toBe(1)
  })

  test('registering a section in scope A does not recompute sibling scope B', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.preset.ctx.systemPrompt.section({ name: 'p', order: 0, text: 'P' })
    await app.systemPrompt.assemble({ scope: keys.agent })
    await app.systemPrompt.assemble({ scope: keys.agent2 })
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent2 }))).structureRecomputes).toBe(0)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).structureRecomputes).toBeGreaterThan(0)
  })

  test('registering in a scope does not recompute the global view', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    await app.systemPrompt.assemble()
    scopes.preset.ctx.systemPrompt.section({ name: 'p', order: 0, text: 'P' })
    expect((await delta(app, () => app.systemPrompt.assemble())).structureRecomputes).toBe(0)
  })

  test('registering in the preset re-derives the preset’s view once, shared by both agents below it', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.preset.ctx.systemPrompt.section({ name: 'p', order: 0, text: 'P' })
    await app.systemPrompt.assemble({ scope: keys.agent })
    await app.systemPrompt.assemble({ scope: keys.agent2 })
    scopes.preset.ctx.systemPrompt.section({ name: 'q', order: 1, text: 'Q' })
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).structureRecomputes).toBe(1)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent2 }))).structureRecomputes).toBe(0)
    expect(sectionNamesOf(await app.systemPrompt.assemble({ scope: keys.agent2 }))).toContain('q')
  })

  test('an agent with sections of its own merges them into its preset’s shared view', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    scopes.agent.ctx.systemPrompt.section({ name: 'a', order: 5, text: 'A' })
    await app.systemPrompt.assemble({ scope: keys.agent })
    await app.systemPrompt.assemble({ scope: keys.agent2 })
    scopes.preset.ctx.systemPrompt.section({ name: 'q', order: 1, text: 'Q' })
    // The preset re-derives once; the agent with its own section merges once more.
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).structureRecomputes).toBe(2)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent2 }))).structureRecomputes).toBe(0)
  })

  test('rebinding one scope’s parent does not recompute an unrelated scope', async () => {
    const app = await mount(BARE)
    const { keys } = await family(app)
    const other = { name: 'other' }
    const childKey = { name: 'child' }
    await mintScope(app, other)
    const binding = bindScopeParent(childKey, keys.preset)
    await app.systemPrompt.assemble({ scope: childKey })
    await app.systemPrompt.assemble({ scope: keys.agent2 })
    binding.rebind(other)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent2 }))).structureRecomputes).toBe(0)
  })

  test('a rebind re-derives the rebound scope’s view with its new chain', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    const childKey = { name: 'child' }
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    scopes.agent2.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent-2' })
    const binding = bindScopeParent(childKey, keys.agent)
    expect(await assembleAndRender(app, childKey)).toBe('agent')
    binding.rebind(keys.agent2)
    expect(await assembleAndRender(app, childKey)).toBe('agent-2')
  })
})

describe('render memoization', () => {
  async function seeded() {
    const app = await mount()
    const { keys, scopes } = await family(app)
    const text = signal('Second {{who}}')
    const who = signal<string | undefined>('me')
    app.systemPrompt.variable('who', who)
    app.systemPrompt.variable('cwd', '/work')
    app.systemPrompt.section({ name: 'first', order: 1, text: 'First in {{cwd}}' })
    scopes.preset.ctx.systemPrompt.section({ name: 'second', order: 2, text })
    scopes.agent.ctx.systemPrompt.section({ name: 'third', order: 3, text: () => 'Third' })
    return { app, keys, text, who }
  }

  test('a repeated render of an unchanged scope re-renders nothing and hits once per section', async () => {
    const { app, keys } = await seeded()
    const first = await assembleAndRender(app, keys.agent)
    const count = (await app.systemPrompt.assemble({ scope: keys.agent })).sections.length
    let second = ''
    const moved = await delta(app, async () => {
      second = await assembleAndRender(app, keys.agent)
    })
    expect(second).toBe(first)
    expect([moved.sectionRenders, moved.renderCacheHits, moved.structureRecomputes]).toEqual([0, count, 0])
    expect(count).toBe(6)
  })

  test('the first render renders every section', async () => {
    const { app, keys } = await seeded()
    const moved = await delta(app, () => assembleAndRender(app, keys.agent))
    expect([moved.sectionRenders, moved.renderCacheHits]).toEqual([6, 0])
  })

  test('changing one section’s signal text re-renders exactly that section', async () => {
    const { app, keys, text } = await seeded()
    await assembleAndRender(app, keys.agent)
    text.value = 'Second changed'
    let rendered = ''
    const moved = await delta(app, async () => {
      rendered = await assembleAndRender(app, keys.agent)
    })
    expect(rendered).toBe('You are an AI agent.\n\nFirst in /work\n\nSecond changed\n\nThird')
    expect([moved.sectionRenders, moved.renderCacheHits]).toEqual([1, 5])
  })

  test('a signal variable change re-renders only the sections that reference it', async () => {
    const { app, keys, who } = await seeded()
    await assembleAndRender(app, keys.agent)
    who.value = 'you'
    let rendered = ''
    const moved = await delta(app, async () => {
      rendered = await assembleAndRender(app, keys.agent)
    })
    expect(rendered).toBe('You are an AI agent.\n\nFirst in /work\n\nSecond you\n\nThird')
    expect([moved.sectionRenders, moved.renderCacheHits]).toEqual([1, 5])
  })

  test('a variable that becomes undefined fails the render and the memo recovers afterwards', async () => {
    const { app, keys, who } = await seeded()
    await assembleAndRender(app, keys.agent)
    who.value = undefined
    await expect(assembleAndRender(app, keys.agent)).rejects.toThrow('has no value')
    who.value = 'me'
    expect(await assembleAndRender(app, keys.agent)).toBe('You are an AI agent.\n\nFirst in /work\n\nSecond me\n\nThird')
  })

  test('a section moved two places keeps its fill, also when another scope last rendered it with other values', async () => {
    const app = await mount(BARE)
    const a = { name: 'a' }
    const b = { name: 'b' }
    const scopeA = await mintScope(app, a)
    const scopeB = await mintScope(app, b)
    app.systemPrompt.section({ name: 'moved', order: 500, text: 'Moved {{x}}' })
    scopeA.ctx.systemPrompt.variable('x', 'A')
    scopeB.ctx.systemPrompt.variable('x', 'B')
    await assembleAndRender(app, a)
    await assembleAndRender(app, b)
    scopeA.ctx.systemPrompt.section({ name: 'first', order: 100, text: 'First' })
    scopeA.ctx.systemPrompt.section({ name: 'second', order: 200, text: 'Second' })
    let rendered = ''
    const moved = await delta(app, async () => {
      rendered = await assembleAndRender(app, a)
    })
    expect(rendered).toBe('First\n\nSecond\n\nMoved A')
    expect(moved.sectionRenders).toBe(2)
    // Alone in its scope (its shared fill is its own last fill) it is not rendered again either.
    scopeA.ctx.systemPrompt.section({ name: 'zero', order: 50, text: 'Zero' })
    scopeA.ctx.systemPrompt.section({ name: 'third', order: 300, text: 'Third' })
    const again = await delta(app, () => assembleAndRender(app, a))
    expect(again.sectionRenders).toBe(2)
  })

  test('scopes keep separate render memos', async () => {
    const { app, keys } = await seeded()
    await assembleAndRender(app, keys.agent)
    await assembleAndRender(app, keys.agent2)
    const moved = await delta(app, async () => {
      await assembleAndRender(app, keys.agent)
      await assembleAndRender(app, keys.agent2)
    })
    expect(moved.sectionRenders).toBe(0)
  })

  test('a repeated context snapshot re-renders nothing', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('cwd', '/work')
    app.systemPrompt.context({ name: 'a', order: 0, text: 'cwd {{cwd}}' })
    app.systemPrompt.context({ name: 'b', order: 1, text: 'B' })
    renderContextSnapshot(await app.systemPrompt.assemble())
    const moved = await delta(app, async () => renderContextSnapshot(await app.systemPrompt.assemble()))
    expect([moved.sectionRenders, moved.renderCacheHits]).toEqual([0, 2])
  })

  test('a hand-built presentation is rendered without touching any memo counter', async () => {
    const app = await mount(BARE)
    const moved = await delta(app, () =>
      renderPrompt({ sections: [{ name: 'a', order: 0, text: 'A' }], variables: {} }),
    )
    expect([moved.sectionRenders, moved.renderCacheHits]).toEqual([0, 0])
  })
})

describe('provider evaluations and tool clones', () => {
  test('counts each function provider once per assembly; strings and signals are not evaluations', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'fn', order: 0, text: () => 'F' })
    app.systemPrompt.section({ name: 'str', order: 1, text: 'S' })
    app.systemPrompt.section({ name: 'sig', order: 2, text: signal('G') })
    scopes.preset.ctx.systemPrompt.context({ name: 'c', order: 0, text: () => 'C' })
    scopes.agent.ctx.systemPrompt.variable('v', () => 'V')
    scopes.agent.ctx.systemPrompt.variable('w', 'W')
    scopes.agent.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    scopes.agent.ctx.systemPrompt.tools(signal<ToolProviderResult>({ schemas: [] }))
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).providerEvaluations).toBe(4)
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).providerEvaluations).toBe(4)
  })

  test('shadowed function providers are not evaluated', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: () => 'global' })
    app.systemPrompt.variable('v', () => 'global')
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    scopes.agent.ctx.systemPrompt.variable('v', 'agent')
    expect((await delta(app, () => app.systemPrompt.assemble({ scope: keys.agent }))).providerEvaluations).toBe(0)
  })

  test('prepare evaluates only variable and context providers', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 's', order: 0, text: () => 'S' })
    app.systemPrompt.context({ name: 'c', order: 0, text: () => 'C' })
    app.systemPrompt.variable('v', () => 'V')
    app.systemPrompt.tools(() => ({ schemas: [] }))
    expect((await delta(app, () => app.systemPrompt.prepare())).providerEvaluations).toBe(2)
  })

  test('toolClones does not grow while a provider returns the same schema objects', async () => {
    const app = await mount(BARE)
    const schemas = [tool('bash'), tool('read')]
    app.systemPrompt.tools(() => ({ schemas: [...schemas] }))
    expect((await delta(app, () => app.systemPrompt.assemble())).toolClones).toBe(2)
    expect((await delta(app, () => app.systemPrompt.assemble())).toolClones).toBe(0)
  })

  test('the same schema objects yield the same detached clones', async () => {
    const app = await mount(BARE)
    const schemas = [tool('bash')]
    app.systemPrompt.tools(() => ({ schemas }))
    const [first, second] = [await app.systemPrompt.assemble(), await app.systemPrompt.assemble()]
    expect(second.tools[0]).toBe(first.tools[0])
  })

  test('toolClones counts one clone per new schema object', async () => {
    const app = await mount(BARE)
    const stable = tool('read')
    app.systemPrompt.tools(() => ({ schemas: [tool('bash'), stable] }))
    await app.systemPrompt.assemble()
    expect((await delta(app, () => app.systemPrompt.assemble())).toolClones).toBe(1)
  })

  test('a new schema object is cloned again and its new content shows', async () => {
    const app = await mount(BARE)
    const provided = signal<ToolProviderResult>({ schemas: [tool('bash')] })
    app.systemPrompt.tools(provided)
    await app.systemPrompt.assemble()
    provided.value = { schemas: [{ ...tool('bash'), description: 'v2' }] }
    let description = ''
    const moved = await delta(app, async () => {
      description = (await app.systemPrompt.assemble()).tools[0]!.description
    })
    expect([description, moved.toolClones]).toEqual(['v2', 1])
  })
})

describe('changeEvents', () => {
  test('matches the change events heard', async () => {
    const app = await mount(BARE)
    const { scopes } = await family(app)
    let heard = 0
    app.on('system-prompt/change', () => void heard++)
    const before = app.systemPrompt.stats().changeEvents
    const text = signal('a')
    const dispose = app.systemPrompt.section({ name: 's', order: 0, text })
    scopes.agent.ctx.systemPrompt.variable('v', 'V')
    text.value = 'b'
    await dispose()
    await scopes.agent.dispose()
    expect(heard).toBeGreaterThanOrEqual(4)
    expect(app.systemPrompt.stats().changeEvents - before).toBe(heard)
  })
})

describe('inspect()', () => {
  async function chain() {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: 'global' })
    app.systemPrompt.section({ name: 'rules', order: 1, text: 'R' })
    scopes.preset.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'preset' })
    scopes.preset.ctx.systemPrompt.section({ name: 'style', order: 2, text: 'S' })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    app.systemPrompt.context({ name: 'date', order: 0, text: 'today' })
    scopes.agent.ctx.systemPrompt.context({ name: 'date', order: 0, text: 'agent today' })
    app.systemPrompt.variable('cwd', '/')
    app.systemPrompt.variable('user', 'root')
    scopes.preset.ctx.systemPrompt.variable('cwd', '/preset')
    scopes.agent.ctx.systemPrompt.variable('model', 'm')
    app.systemPrompt.tools(() => ({ schemas: [] }))
    scopes.preset.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    scopes.preset.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    scopes.agent.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    scopes.agent2.ctx.systemPrompt.tools(() => ({ schemas: [] }))
    return { app, keys }
  }

  test('names the supplying layer and the shadowed layers of each section along preset → agent', async () => {
    const { app, keys } = await chain()
    expect(app.systemPrompt.inspect(keys.agent).sections).toEqual([
      { name: 'deployment:persona-prefix', layer: 'global', shadows: [] },
      { name: 'who', layer: keys.agent, shadows: ['global', keys.preset] },
      { name: 'rules', layer: 'global', shadows: [] },
      { name: 'style', layer: keys.preset, shadows: [] },
      { name: 'deployment:persona-suffix', layer: 'global', shadows: [] },
    ])
  })

  test('layers are the exact scope keys', async () => {
    const { app, keys } = await chain()
    const who = app.systemPrompt.inspect(keys.agent).sections[1]!
    expect(who.layer).toBe(keys.agent)
    expect(who.shadows[1]).toBe(keys.preset)
  })

  test('lists contexts and variables with their layers', async () => {
    const { app, keys } = await chain()
    const inspection = app.systemPrompt.inspect(keys.agent)
    expect(inspection.contexts).toEqual([{ name: 'date', layer: keys.agent, shadows: ['global'] }])
    expect(inspection.variables).toEqual([
      { name: 'cwd', layer: keys.preset, shadows: ['global'] },
      { name: 'user', layer: 'global', shadows: [] },
      { name: 'model', layer: keys.agent, shadows: [] },
    ])
  })

  test('lists one { layer, index } per contributing tool provider, global first', async () => {
    const { app, keys } = await chain()
    expect(app.systemPrompt.inspect(keys.agent).tools).toEqual([
      { layer: 'global', index: 0 },
      { layer: keys.preset, index: 0 },
      { layer: keys.preset, index: 1 },
      { layer: keys.agent, index: 0 },
    ])
  })

  test('a sub-agent inherits the agent’s view', async () => {
    const { app, keys } = await chain()
    expect(app.systemPrompt.inspect(keys.sub)).toEqual(app.systemPrompt.inspect(keys.agent))
  })

  test('without a scope, inspects the global view', async () => {
    const { app } = await chain()
    const inspection = app.systemPrompt.inspect()
    expect(inspection.sections.map((entry) => [entry.name, entry.layer])).toEqual([
      ['deployment:persona-prefix', 'global'],
      ['who', 'global'],
      ['rules', 'global'],
      ['deployment:persona-suffix', 'global'],
    ])
    expect(inspection.tools).toEqual([{ layer: 'global', index: 0 }])
  })

  test('contexts are listed even while suppressed', async () => {
    const { app, keys } = await chain()
    app.systemPrompt.suppressRuntimeContext()
    expect(app.systemPrompt.inspect(keys.agent).contexts.map((entry) => entry.name)).toEqual(['date'])
  })

  test('follows disposals', async () => {
    const app = await mount(BARE)
    const { keys, scopes } = await family(app)
    app.systemPrompt.section({ name: 'who', order: 0, text: 'global' })
    scopes.agent.ctx.systemPrompt.section({ name: 'who', order: 0, text: 'agent' })
    await scopes.agent.dispose()
    expect(app.systemPrompt.inspect(keys.agent).sections[1]).toEqual({ name: 'who', layer: 'global', shadows: [] })
  })
})
