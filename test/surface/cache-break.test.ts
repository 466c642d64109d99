import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createStepSurface, type StepResult, type StepSurface, type StepSurfaceOptions, type ToolSchema } from '../../src/index.js'
import { BARE, mintScope, mount, tool } from '../assembly/system-prompt.fixtures.js'

// StepResult.cacheBreak over a real SystemPrompt: each kind of change between
// two steps, and the cause the surface names for it.

async function twoSteps(
  root: Context,
  change: () => void | Promise<void>,
  options: StepSurfaceOptions = {},
  scope?: object,
): Promise<[StepResult, StepResult]> {
  const surface = createStepSurface(options)
  const first = await step(surface, root, scope)
  await change()
  return [first, await step(surface, root, scope)]
}

async function step(surface: StepSurface, root: Context, scope?: object, config: Record<string, unknown> = { model: 'm' }): Promise<StepResult> {
  return surface.step({ assembly: await root.systemPrompt.assemble(scope === undefined ? {} : { scope }), config })
}

async function base(): Promise<Context> {
  const root = await mount(BARE)
  root.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom, a coding agent.' })
  root.systemPrompt.section({ name: 'policy', order: 10, text: 'Plan first, then work on {{branch}} in {{cwd}}.' })
  root.systemPrompt.section({ name: 'outro', order: 20, text: 'Be brief.' })
  root.systemPrompt.variable('cwd', '/work')
  return root
}

describe('cacheBreak names the first cause of lost reuse', () => {
  test('a variable value change: the section, its layer and the variable', async () => {
    const root = await base()
    const branch = signal('main')
    root.systemPrompt.variable('branch', branch)
    const [first, second] = await twoSteps(root, () => void (branch.value = 'feature/login'))
    expect(first.cacheBreak).toBeUndefined()
    expect(second.cacheBreak).toEqual({ cause: 'section', section: 'policy', layer: 'global', variable: 'branch' })
  })

  test('a template change names the section without a variable, even when a value changed too', async () => {
    const root = await mount(BARE)
    const branch = signal('main')
    const text = signal('Plan first, then work on {{branch}} in {{cwd}}.')
    root.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom, a coding agent.' })
    root.systemPrompt.section({ name: 'policy', order: 10, text })
    root.systemPrompt.variable('cwd', '/work')
    root.systemPrompt.variable('branch', branch)
    const [, second] = await twoSteps(root, () => {
      text.value = 'Plan first; then work on {{branch}} in {{cwd}}.'
      branch.value = 'feature/login'
    })
    expect(second.cacheBreak).toEqual({ cause: 'section', section: 'policy', layer: 'global' })
  })

  test('the first changed variable in the part is named when two values changed', async () => {
    const root = await mount(BARE)
    const branch = signal('main')
    const cwd = signal('/work')
    root.systemPrompt.section({ name: 'policy', order: 10, text: 'Work in {{cwd}} on {{branch}}.' })
    root.systemPrompt.variable('cwd', cwd)
    root.systemPrompt.variable('branch', branch)
    const [, second] = await twoSteps(root, () => {
      branch.value = 'dev'
      cwd.value = '/tmp'
    })
    expect(second.cacheBreak).toEqual({ cause: 'section', section: 'policy', layer: 'global', variable: 'cwd' })
  })

  test('a tool added: cause tools with the added name, before any prompt change', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const tools = signal<{ schemas: ToolSchema[] }>({ schemas: [tool('read')] })
    root.systemPrompt.tools(tools)
    const [, second] = await twoSteps(root, () => {
      tools.value = { schemas: [tool('read'), tool('grep')] }
      root.systemPrompt.section({ name: 'early', order: -5, text: 'Early words.' })
    })
    expect(second.cacheBreak).toEqual({ cause: 'tools', tools: { added: ['grep'], removed: [], changed: [] } })
  })

  test('a tool changed and one removed are listed by name', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const tools = signal<{ schemas: ToolSchema[] }>({ schemas: [tool('read'), tool('ls')] })
    root.systemPrompt.tools(tools)
    const [, second] = await twoSteps(root, () => void (tools.value = { schemas: [{ ...tool('read'), description: 'Read one file.' }] }))
    expect(second.cacheBreak).toEqual({ cause: 'tools', tools: { added: [], removed: ['ls'], changed: ['read'] } })
  })

  test('a config change: cause config', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const surface = createStepSurface()
    await step(surface, root, undefined, { model: 'm' })
    const second = await step(surface, root, undefined, { model: 'm', temperature: 1 })
    expect(second.cacheBreak).toEqual({ cause: 'config' })
  })

  test('a removed first section: cause removed, naming it and its layer', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const key = { name: 'agent-1' }
    const scope = await mintScope(root, key)
    const dispose = scope.ctx.systemPrompt.section({ name: 'opening', order: -10, text: 'Scoped opening words.' })
    const [, second] = await twoSteps(root, () => dispose(), {}, key)
    expect(second.cacheBreak).toEqual({ cause: 'removed', section: 'opening', layer: key })
  })

  test('a section added mid-prompt: cause added', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const [, second] = await twoSteps(root, () => void root.systemPrompt.section({ name: 'middle', order: 15, text: 'Tests first.' }))
    expect(second.cacheBreak).toEqual({ cause: 'added', section: 'middle', layer: 'global' })
  })

  test('a section that moved ahead of another: cause section, the one now at the difference', async () => {
    const root = await mount(BARE)
    root.systemPrompt.section({ name: 'a', order: 0, text: 'Alpha.' })
    root.systemPrompt.section({ name: 'b', order: 5, text: 'Beta.' })
    const dispose = root.systemPrompt.section({ name: 'c', order: 10, text: 'Gamma.' })
    const [, second] = await twoSteps(root, () => {
      dispose()
      root.systemPrompt.section({ name: 'c', order: 1, text: 'Gamma.' })
    })
    expect(second.cacheBreak).toEqual({ cause: 'section', section: 'c', layer: 'global' })
  })

  test('nothing lost: no cacheBreak for an unchanged step or a section appended at the end', async () => {
    const root = await base()
    root.systemPrompt.variable('branch', 'main')
    const surface = createStepSurface()
    await step(surface, root)
    const same = await step(surface, root)
    root.systemPrompt.section({ name: 'last', order: 99, text: 'Appended.' })
    const appended = await step(surface, root)
    expect([same.cacheBreak, appended.cacheBreak, 'cacheBreak' in appended]).toEqual([undefined, undefined, false])
    expect(appended.changedSections).toEqual(['last'])
  })
})

describe('cacheBreak under a token budget', () => {
  // A token is a word; the separator costs nothing.
  const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

  async function budgeted(): Promise<{ root: Context; surface: StepSurface; extra: () => () => void }> {
    const root = await mount(BARE)
    root.systemPrompt.section({ name: 'intro', order: 0, text: 'one two three' })
    root.systemPrompt.section({ name: 'tips', order: 10, text: 'four five six', priority: -1 })
    root.systemPrompt.section({ name: 'tail', order: 20, text: 'seven eight' })
    const surface = createStepSurface({ budget: { maxTokens: 9, countTokens: words, headroom: 0 } })
    return { root, surface, extra: () => root.systemPrompt.section({ name: 'more', order: 30, text: 'nine ten' }) }
  }

  test('the budget withholding a mid-prompt section: cause withheld, naming it', async () => {
    const { root, surface, extra } = await budgeted()
    await step(surface, root)
    extra()
    const second = await step(surface, root)
    expect(second.withheld).toEqual(['tips'])
    expect(second.cacheBreak).toEqual({ cause: 'withheld', section: 'tips', layer: 'global' })
  })

  test('the budget restoring it: cause restored', async () => {
    const { root, surface, extra } = await budgeted()
    await step(surface, root)
    const dispose = extra()
    await step(surface, root)
    dispose()
    const third = await step(surface, root)
    expect(third.withheld).toEqual([])
    expect(third.cacheBreak).toEqual({ cause: 'restored', section: 'tips', layer: 'global' })
  })

  test('a restore and a removal in one step: the first difference decides', async () => {
    const { root, surface } = await budgeted()
    const big = root.systemPrompt.section({ name: 'big', order: 30, text: 'a b c' })
    const first = await step(surface, root)
    expect(first.withheld).toEqual(['tips'])
    big()
    const second = await step(surface, root)
    expect(second.withheld).toEqual([])
    expect(second.cacheBreak).toEqual({ cause: 'restored', section: 'tips', layer: 'global' })
  })
})
