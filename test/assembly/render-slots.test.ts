import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import type { Pipeline as Engine } from '../../src/assembly/pipeline.js'
import {
  createScope,
  render,
  renderContextSnapshot,
  SystemPrompt,
  type PromptAssembly,
  type RenderedPrompt,
  type SystemPromptConfig,
} from '../../src/index.js'

// Config `renderCacheScopes` (docs/design.md, "Registry and assembly"): at most that many scopes
// keep their render state; the least recently assembled beyond it release
// theirs and render from scratch on their next step, equal and correct.

const SCOPES = 10

/** The service's engine, reached through its private symbol (internals on purpose: the render slots). */
function engineOf(app: Context): Engine {
  const service = app.systemPrompt as unknown as Record<symbol, unknown>
  const symbol = Object.getOwnPropertySymbols(service).find((s) => s.description === 'promptloom.engine')!
  return service[symbol] as Engine
}

interface World {
  readonly app: Context
  readonly keys: readonly { readonly name: string }[]
}

/** Two global sections (one referencing each agent's own `cwd`), a context, and SCOPES agents with a section each. */
async function world(config: SystemPromptConfig): Promise<World> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false, ...config })
  let ctx!: Context
  await app.inject(['systemPrompt'], (injected) => {
    ctx = injected
  })
  ctx.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello {{user}}, working in {{cwd}}.' })
  ctx.systemPrompt.section({ name: 'rules', order: 10, text: 'Be brief.', cacheBreakpoint: true })
  ctx.systemPrompt.context({ name: 'where', order: 100, text: 'Now in {{cwd}}.' })
  ctx.systemPrompt.variable('user', 'Ada')
  ctx.systemPrompt.variable('cwd', '/')
  const keys = Array.from({ length: SCOPES }, (_, i) => ({ name: `agent-${i}` }))
  for (const [i, key] of keys.entries()) {
    const scoped = createScope(ctx, key).ctx.systemPrompt
    scoped.section({ name: 'role', order: 5, text: `You are agent ${i}.` })
    scoped.variable('cwd', `/work/agent-${i}`)
  }
  return { app, keys }
}

/** A render of `assembly` from scratch: a copy carries no record, so it meets no memo. */
function fromScratch(assembly: PromptAssembly): { text: string; parts: readonly { name: string; text: string }[] } {
  const copy = render({ sections: assembly.sections.map((s) => ({ ...s })), variables: { ...assembly.variables } })
  return { text: copy.text, parts: copy.parts.map(({ name, text }) => ({ name, text })) }
}

/** Steps every scope once, in order; returns each one's assembly and prompt. */
async function round(w: World): Promise<{ assembly: PromptAssembly; rendered: RenderedPrompt }[]> {
  const out = []
  for (const key of w.keys) {
    const assembly = await w.app.systemPrompt.assemble({ scope: key })
    out.push({ assembly, rendered: render(assembly) })
  }
  return out
}

describe('config renderCacheScopes', () => {
  test('with a bound of 3 and 10 scopes stepped round-robin, only 3 keep a render slot', async () => {
    const w = await world({ renderCacheScopes: 3 })
    const engine = engineOf(w.app)
    for (let r = 0; r < 3; r++) {
      for (const key of w.keys) {
        render(await w.app.systemPrompt.assemble({ scope: key }))
        expect(engine.views.renderSlots.kept).toBeLessThanOrEqual(3)
      }
      expect(engine.views.renderSlots.kept).toBe(3)
    }
    // Every step after the first three created a slot and released the oldest.
    expect(engine.views.renderSlots.released).toBe(3 * SCOPES - 3)
  })

  test('a released scope renders from scratch, equal to a render without memo', async () => {
    const w = await world({ renderCacheScopes: 3 })
    const first = await round(w)
    const before = w.app.systemPrompt.stats()
    const second = await round(w)
    const after = w.app.systemPrompt.stats()
    // Nothing changed, yet each scope's slot was released before its turn came again: every section is rendered anew.
    const sections = second.reduce((sum, { assembly }) => sum + assembly.sections.length, 0)
    expect(after.sectionRenders - before.sectionRenders).toBe(sections)
    expect(after.renderCacheHits - before.renderCacheHits).toBe(0)
    for (let i = 0; i < SCOPES; i++) {
      const { assembly, rendered } = second[i]!
      expect(rendered).not.toBe(first[i]!.rendered)
      expect(rendered).toEqual(first[i]!.rendered)
      expect({ text: rendered.text, parts: rendered.parts.map(({ name, text }) => ({ name, text })) }).toEqual(fromScratch(assembly))
      expect(rendered.text).toContain(`/work/agent-${i}`)
      expect(renderContextSnapshot(assembly)).toContain(`Now in /work/agent-${i}.`)
    }
  })

  test('a bound that holds every scope keeps each unchanged prompt the same object', async () => {
    const w = await world({ renderCacheScopes: SCOPES })
    const first = await round(w)
    const before = w.app.systemPrompt.stats()
    const second = await round(w)
    expect(w.app.systemPrompt.stats().sectionRenders - before.sectionRenders).toBe(0)
    for (let i = 0; i < SCOPES; i++) expect(second[i]!.rendered).toBe(first[i]!.rendered)
    expect(engineOf(w.app).views.renderSlots.released).toBe(0)
  })

  test('a result assembled before its scope was released still renders through its own slot', async () => {
    const w = await world({ renderCacheScopes: 3 })
    const early = await w.app.systemPrompt.assemble({ scope: w.keys[0] })
    const rendered = render(early)
    await round(w) // releases agent-0's slot (and every other but the last three)
    expect(render(early)).toBe(rendered)
    expect(render(early).text).toBe(fromScratch(early).text)
  })

  test('a scope stepped again after its release keeps its new slot while it stays recent', async () => {
    const w = await world({ renderCacheScopes: 3 })
    await round(w)
    const key = w.keys[0]!
    const again = render(await w.app.systemPrompt.assemble({ scope: key }))
    const before = w.app.systemPrompt.stats()
    expect(render(await w.app.systemPrompt.assemble({ scope: key }))).toBe(again)
    expect(w.app.systemPrompt.stats().sectionRenders).toBe(before.sectionRenders)
  })

  test('the default keeps 1000 scopes; Infinity keeps every one and orders none', async () => {
    const bounded = await world({})
    await round(bounded)
    expect(engineOf(bounded.app).views.renderSlots).toEqual({ kept: SCOPES, released: 0 })
    const unbounded = await world({ renderCacheScopes: Infinity })
    await round(unbounded)
    expect(engineOf(unbounded.app).views.renderSlots).toEqual({ kept: 0, released: 0 })
  })

  test.each([
    [0, 'number 0'],
    [-1, 'number -1'],
    [1.5, 'number 1.5'],
    [Number.NaN, 'number NaN'],
    ['3', 'string "3"'],
  ])('renderCacheScopes %s is rejected at load, naming the value and the rule', async (value, shown) => {
    const app = new Context()
    await expect(app.plugin(SystemPrompt, { renderCacheScopes: value as number })).rejects.toThrow(
      `renderCacheScopes must be a positive integer or Infinity (got ${shown})`,
    )
    expect(app.get('systemPrompt')).toBeUndefined()
  })
})
