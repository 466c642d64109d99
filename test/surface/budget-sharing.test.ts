import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { comparePrompts, createStepSurface, type BudgetSharing, type StepResult } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'

// budget: { shared: 'prefer-unshared' }: agents of one preset keep sharing
// their prefix while a budget cuts one of them. A token is a word.

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

interface World {
  readonly root: Context
  readonly agents: readonly object[]
  readonly scopes: readonly { readonly ctx: Context }[]
  readonly step: (agent: object, shared?: BudgetSharing, maxTokens?: number) => Promise<StepResult>
}

describe("budget shared: 'prefer-unshared'", () => {
  test('by default the budget withholds the low-priority shared section, and the agent stops sharing from there', async () => {
    const w = await guidanceWorld()
    const tight = await w.step(w.agents[0]!, undefined, 8)
    const roomy = await w.step(w.agents[1]!)
    expect(tight.withheld).toEqual(['guidance'])
    expect(comparePrompts(tight.rendered, roomy.rendered).firstDifferentPart).toEqual({ a: 'web', b: 'guidance' })
  })

  test('prefer-unshared withholds the section that fills in the agent\'s own variable first, so the shared prefix survives', async () => {
    const w = await guidanceWorld()
    const tight = await w.step(w.agents[0]!, 'prefer-unshared', 8)
    const roomy = await w.step(w.agents[1]!)
    expect(tight.withheld).toEqual(['env'])
    expect(tight.rendered.text).toBe(roomy.rendered.text.slice(0, tight.rendered.text.length))
    expect(tight.warnings[0]).toMatchObject({ kind: 'withheld', sections: ['env'] })
    expect((tight.warnings[0] as { message: string }).message).toContain('sections after the prefix shared with sibling agents first, then lowest priority first')
  })

  test('a section the agent\'s own layer supplies is outside the shared prefix, whatever its priority', async () => {
    const w = await guidanceWorld()
    w.scopes[0]!.ctx.systemPrompt.section({ name: 'mine', order: 25, text: 'm1', priority: 10 })
    // 10 tokens: mine (priority 10) and env are after the shared prefix; env (priority 0) goes first, then mine, before guidance (-1).
    const looser = await w.step(w.agents[0]!, 'prefer-unshared', 9)
    expect(looser.withheld).toEqual(['env'])
    const tight = await w.step(w.agents[0]!, 'prefer-unshared', 7)
    expect(tight.withheld).toEqual(['mine', 'env'])
  })

  test('once every unshared section is withheld, shared ones follow by the usual rule', async () => {
    const w = await guidanceWorld()
    const tighter = await w.step(w.agents[0]!, 'prefer-unshared', 6)
    expect(tighter.withheld).toEqual(['guidance', 'env'])
  })

  test('sticky like the usual rule: an unchanged registry sends the same prompt object step after step', async () => {
    const w = await guidanceWorld()
    const surface = createStepSurface({ budget: { maxTokens: 8, countTokens: words, headroom: 0, shared: 'prefer-unshared' } })
    const first = surface.step({ assembly: await w.root.systemPrompt.assemble({ scope: w.agents[0]! }) })
    const second = surface.step({ assembly: await w.root.systemPrompt.assemble({ scope: w.agents[0]! }) })
    expect([first.withheld, second.withheld, second.rendered === first.rendered, second.cacheBreak]).toEqual([['env'], ['env'], true, undefined])
  })

  test('an assembly of the global view has no own layer: the usual rule', async () => {
    const w = await guidanceWorld()
    w.root.systemPrompt.variable('cwd', '/work')
    w.root.systemPrompt.section({ name: 'tips', order: 15, text: 't1', priority: -1 })
    const result = createStepSurface({ budget: { maxTokens: 7, countTokens: words, headroom: 0, shared: 'prefer-unshared' } }).step({
      assembly: await w.root.systemPrompt.assemble(),
    })
    expect(result.withheld).toEqual(['tips'])
  })
})

/**
 * Two agents under preset "coder", each with its own {{cwd}}:
 *
 *   intro (global) · guidance (the preset's, priority -1) · web (global) · env (global, fills in {{cwd}})
 */
async function guidanceWorld(): Promise<World> {
  const root = await mount(BARE)
  const preset = { name: 'coder' }
  const presetScope = await mintScope(root, preset)
  const agents = [{ name: 'agent-1' }, { name: 'agent-2' }]
  const scopes = []
  for (const key of agents) scopes.push(await mintScope(root, key, preset))
  root.systemPrompt.section({ name: 'intro', order: 0, text: 'w1 w2 w3' })
  presetScope.ctx.systemPrompt.section({ name: 'guidance', order: 10, text: 'g1 g2', priority: -1 })
  root.systemPrompt.section({ name: 'web', order: 20, text: 'w4 w5' })
  root.systemPrompt.section({ name: 'env', order: 30, text: 'cwd {{cwd}}' })
  scopes.forEach((scope, i) => scope.ctx.systemPrompt.variable('cwd', `/work/agent-${i + 1}`))
  return {
    root,
    agents,
    scopes,
    step: async (agent, shared, maxTokens = 100) =>
      createStepSurface({ budget: { maxTokens, countTokens: words, headroom: 0, ...(shared === undefined ? {} : { shared }) } }).step({
        assembly: await root.systemPrompt.assemble({ scope: agent }),
      }),
  }
}
