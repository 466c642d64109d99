import { computed, signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { renderContextSnapshot, renderPrompt, type PromptAssembly, type ToolProviderResult } from '../../src/index.js'
import { delta, GLOBAL_TOOLS, observe, world, type Observation, type World } from './world.js'

// SPEC §2 Reliability: a provider or listener that throws (or rejects), or an
// abort, fails only that call; the next call after the fault is gone is
// correct, because no memoized value keeps what a failed evaluation left.

const boom = new Error('provider failed')

const a1 = (w: World) => w.scopes.agent1.ctx.systemPrompt
const fail = (): never => {
  throw boom
}

/** The world's baseline, then: everything equal again and nothing re-derived, re-rendered or cloned. */
async function expectUnpoisoned(w: World, baseline: Observation): Promise<void> {
  const stats = w.app.systemPrompt.stats()
  expect(await observe(w)).toEqual(baseline)
  expect(delta(stats, w.app.systemPrompt.stats())).toMatchObject({
    structureRecomputes: 0,
    sectionRenders: 0,
    toolClones: 0,
    changeEvents: 0,
  })
}

/** Plain (memo-less) renders of `assembly`: the meta is non-enumerable, so a spread copy drops it. */
function plainRenders(assembly: PromptAssembly): [string, string] {
  return [renderPrompt({ ...assembly }), renderContextSnapshot({ ...assembly })]
}

const PROVIDER_FAULTS: [string, (w: World) => unknown][] = [
  ['a context text provider', (w) => a1(w).context({ name: 'disk', order: 130, text: w.faulty('free', fail) })],
  ['a section text provider', (w) => a1(w).section({ name: 'late', order: 2000, text: w.faulty('late', fail) })],
  ['a variable provider', (w) => a1(w).variable('branch', w.faulty<string | undefined>('main', fail))],
  ['a tool provider', (w) => a1(w).tools(w.faulty<ToolProviderResult>({ schemas: [] }, fail))],
  ['a global tool provider', (w) => w.app.systemPrompt.tools(w.faulty<ToolProviderResult>({ schemas: [] }, fail))],
  [
    'a prepare listener',
    (w) => w.app.on('system-prompt/prepare', async (_p, _c, next) => (w.fault ? fail() : next())),
  ],
  [
    'an assemble listener that throws synchronously',
    (w) => w.app.on('system-prompt/assemble', ((p: never, c: never, next: () => never) => (w.fault ? fail() : next())) as never),
  ],
  [
    'an assemble listener that rejects after a macrotask',
    (w) =>
      w.scopes.preset.ctx.on('system-prompt/assemble', async (_p, _c, next) => {
        await new Promise(setImmediate)
        return w.fault ? fail() : next()
      }),
  ],
]

describe('a throwing provider or listener fails only that call', () => {
  test.each(PROVIDER_FAULTS)('%s: assemble rejects with its error, and the next call is correct', async (_, install) => {
    const w = await world()
    install(w)
    const baseline = await observe(w)
    const changes = w.changes.count
    w.fault = true
    await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1 })).rejects.toBe(boom)
    w.fault = false
    expect(w.changes.count).toBe(changes)
    await expectUnpoisoned(w, baseline)
  })

  test.each(PROVIDER_FAULTS.filter(([what]) => /context|variable|prepare/.test(what)))(
    '%s: prepare rejects with its error, and the next call is correct',
    async (_, install) => {
      const w = await world()
      install(w)
      const baseline = await observe(w)
      const preparation = await w.app.systemPrompt.prepare({ scope: w.keys.agent1 })
      w.fault = true
      await expect(w.app.systemPrompt.prepare({ scope: w.keys.agent1 })).rejects.toBe(boom)
      w.fault = false
      expect(await w.app.systemPrompt.prepare({ scope: w.keys.agent1 })).toEqual(preparation)
      await expectUnpoisoned(w, baseline)
    },
  )

  test('a fault that lasts several calls fails each of them the same way, then recovers', async () => {
    const w = await world()
    PROVIDER_FAULTS[1]![1](w)
    const baseline = await observe(w)
    w.fault = true
    for (let i = 0; i < 3; i++) await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1 })).rejects.toBe(boom)
    w.fault = false
    await expectUnpoisoned(w, baseline)
  })

  test('a signal text whose derivation throws fails the call, and recovers when its input does', async () => {
    const w = await world()
    const broken = signal(false)
    a1(w).section({ name: 'late', order: 2000, text: computed(() => (broken.value ? fail() : 'late')) })
    const baseline = await observe(w)
    broken.value = true
    await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1 })).rejects.toBe(boom)
    broken.value = false
    const stats = w.app.systemPrompt.stats()
    expect(await observe(w)).toEqual(baseline)
    expect(delta(stats, w.app.systemPrompt.stats())).toMatchObject({ structureRecomputes: 0, sectionRenders: 0 })
  })

  test('a signal tool provider whose derivation throws fails the call, and the tool memo recovers', async () => {
    const w = await world()
    const broken = signal(false)
    const result: ToolProviderResult = { schemas: [{ name: 'grep', description: 'search', parameters: {} }] }
    a1(w).tools(computed(() => (broken.value ? fail() : result)))
    const baseline = await observe(w)
    broken.value = true
    await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1 })).rejects.toBe(boom)
    broken.value = false
    const stats = w.app.systemPrompt.stats()
    expect(await observe(w)).toEqual(baseline)
    expect(delta(stats, w.app.systemPrompt.stats()).toolClones).toBe(0)
  })

  test('a render that failed on a bad template leaves the render memo as it was', async () => {
    const w = await world()
    const text = signal('Notes for {{cwd}}.')
    a1(w).section({ name: 'notes', order: 1500, text })
    const good = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const prompt = renderPrompt(good)
    text.value = 'Notes for {{ cwd }}.'
    const bad = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    expect(() => renderPrompt(bad)).toThrow('malformed prompt variable reference')
    text.value = 'Notes for {{cwd}}.'
    const again = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const stats = w.app.systemPrompt.stats()
    expect(renderPrompt(again)).toBe(prompt)
    // Served from the memo of the good render: nothing scanned again.
    expect(delta(stats, w.app.systemPrompt.stats()).sectionRenders).toBe(0)
  })
})

describe('an aborted call rejects with the reason and leaves nothing half-applied', () => {
  test('a signal aborted before the call: rejects with its reason and calls no provider', async () => {
    const w = await world()
    a1(w).section({ name: 'late', order: 2000, text: () => 'late' })
    const baseline = await observe(w)
    const controller = new AbortController()
    controller.abort(new Error('cancelled'))
    const stats = w.app.systemPrompt.stats()
    await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1, signal: controller.signal })).rejects.toBe(
      controller.signal.reason,
    )
    await expect(w.app.systemPrompt.prepare({ scope: w.keys.agent1, signal: controller.signal })).rejects.toBe(
      controller.signal.reason,
    )
    expect(delta(stats, w.app.systemPrompt.stats()).providerEvaluations).toBe(0)
    await expectUnpoisoned(w, baseline)
  })

  test('a signal aborted during the prepare waterfall: rejects with the default AbortError, no section is read', async () => {
    const w = await world()
    const section = { calls: 0 }
    a1(w).section({ name: 'late', order: 2000, text: () => (section.calls++, 'late') })
    const baseline = await observe(w)
    const controller = new AbortController()
    const heard: string[] = []
    w.app.on('system-prompt/prepare', async (_p, context, next) => {
      if (context.signal === controller.signal) {
        await new Promise(setImmediate)
        controller.abort()
      }
      return next()
    })
    w.app.on('system-prompt/assemble', async (_p, context, next) => {
      if (context.signal === controller.signal) heard.push('assemble')
      return next()
    })
    section.calls = 0
    const error = await w.app.systemPrompt.assemble({ scope: w.keys.agent1, signal: controller.signal }).catch((e) => e)
    expect(error).toBe(controller.signal.reason)
    expect((controller.signal.reason as Error).name).toBe('AbortError')
    expect([section.calls, heard]).toEqual([0, []])
    await expectUnpoisoned(w, baseline)
  })

  test('a signal aborted between prepare and assemble: assembling that preparation rejects', async () => {
    const w = await world()
    const baseline = await observe(w)
    const controller = new AbortController()
    const preparation = await w.app.systemPrompt.prepare({ scope: w.keys.agent1, signal: controller.signal })
    controller.abort('stop')
    await expect(
      w.app.systemPrompt.assemble({ scope: w.keys.agent1, signal: controller.signal }, preparation),
    ).rejects.toBe('stop')
    await expectUnpoisoned(w, baseline)
  })

  test('a signal aborted during the assemble waterfall: rejects even though every listener resolved', async () => {
    const w = await world()
    const baseline = await observe(w)
    const controller = new AbortController()
    w.scopes.agent1.ctx.on('system-prompt/assemble', async (presentation, context, next) => {
      if (context.signal === controller.signal) {
        presentation.sections.length = 0
        presentation.variables.user = 'Mallory'
        await new Promise(setImmediate)
        controller.abort('stop')
      }
      return next()
    })
    await expect(w.app.systemPrompt.assemble({ scope: w.keys.agent1, signal: controller.signal })).rejects.toBe('stop')
    await expectUnpoisoned(w, baseline)
  })

  test('a signal aborted after the assembly resolved changes neither that result nor the next one', async () => {
    const w = await world()
    const baseline = await observe(w)
    const controller = new AbortController()
    const assembly = await w.app.systemPrompt.assemble({ scope: w.keys.agent1, signal: controller.signal })
    controller.abort('late')
    const expected = baseline.assemblies[2]!
    expect('ok' in expected && { assembly, prompt: renderPrompt(assembly), snapshot: renderContextSnapshot(assembly) }).toEqual(
      'ok' in expected && expected.ok,
    )
    await expectUnpoisoned(w, baseline)
  })
})

describe('registrations and disposals while an assembly awaits its waterfall', () => {
  /** Runs `during` inside the agent-1 assemble waterfall, after a macrotask; returns that assembly. */
  async function assembleAround(w: World, during: () => unknown): Promise<PromptAssembly> {
    let armed = true
    w.app.on('system-prompt/assemble', async (_p, _c, next) => {
      if (armed) {
        armed = false
        await new Promise(setImmediate)
        await during()
      }
      return next()
    })
    return w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
  }

  test('entries registered meanwhile are not in that assembly and are in the next', async () => {
    const w = await world()
    const before = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const assembly = await assembleAround(w, () => {
      a1(w).section({ name: 'late', order: 2000, text: 'Late {{branch}}.' })
      a1(w).variable('branch', 'main')
      a1(w).tools(() => ({ schemas: [{ name: 'grep', description: 'search', parameters: {} }] }))
      a1(w).context({ name: 'disk', order: 130, text: 'free' })
      a1(w).suppressRuntimeContext()
    })
    expect(assembly).toEqual(before)
    expect(renderPrompt(assembly)).toBe(plainRenders(assembly)[0])
    const next = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    expect(next.sections.map((s) => s.name)).toContain('late')
    expect(next.tools.map((t) => t.name)).toEqual(['read', 'bash', 'grep'])
    expect(next.contexts.map((c) => c.name)).toEqual(['job'])
    expect([renderPrompt(next), renderContextSnapshot(next)]).toEqual(plainRenders(next))
    expect(renderPrompt(next)).toContain('Late main.')
  })

  test('entries disposed meanwhile stay in that assembly and are gone from the next', async () => {
    const w = await world()
    const sp = a1(w)
    const disposers = [
      sp.section({ name: 'late', order: 2000, text: () => 'Late {{branch}}.' }),
      sp.variable('branch', () => 'main'),
      sp.tools(() => ({ schemas: [{ name: 'grep', description: 'search', parameters: {} }] })),
      sp.context({ name: 'disk', order: 130, text: () => 'free' }),
    ]
    const before = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const assembly = await assembleAround(w, () => Promise.all(disposers.map((dispose) => dispose())))
    expect(assembly).toEqual(before)
    expect([renderPrompt(assembly), renderContextSnapshot(assembly)]).toEqual(plainRenders(assembly))
    const next = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    expect(next.sections.map((s) => s.name)).not.toContain('late')
    expect(next.tools.map((t) => t.name)).toEqual(['read', 'bash'])
    expect([renderPrompt(next), renderContextSnapshot(next)]).toEqual(plainRenders(next))
  })

  test('the whole scope disposed meanwhile: that assembly is intact, the next one sees only the parent', async () => {
    const w = await world()
    const before = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const beforePrompt = renderPrompt(before)
    const assembly = await assembleAround(w, () => w.scopes.agent1.dispose())
    expect(assembly).toEqual(before)
    expect(renderPrompt(assembly)).toBe(beforePrompt)
    const next = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    expect(next).toEqual(await w.app.systemPrompt.assemble({ scope: w.keys.preset }))
    expect(w.app.systemPrompt.inspect(w.keys.agent1)).toEqual(w.app.systemPrompt.inspect(w.keys.preset))
    expect([renderPrompt(next), renderContextSnapshot(next)]).toEqual(plainRenders(next))
  })

  test('the global tools changed meanwhile: that assembly keeps the tools it collected', async () => {
    const w = await world()
    const tools = signal<ToolProviderResult>({ schemas: [] })
    w.app.systemPrompt.tools(tools)
    const before = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    const assembly = await assembleAround(w, () => {
      tools.value = { schemas: [{ name: 'web', description: 'fetch', parameters: {} }] }
    })
    expect(assembly.tools).toEqual(before.tools)
    expect((await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })).tools.map((t) => t.name)).toEqual([
      'read',
      'bash',
      'web',
    ])
    expect(GLOBAL_TOOLS.schemas.map((s) => s.name)).toEqual(['bash', 'read'])
  })

  test('a section registered during the prepare waterfall is in that assembly', async () => {
    const w = await world()
    let armed = true
    w.app.on('system-prompt/prepare', async (_p, _c, next) => {
      if (armed) {
        armed = false
        await new Promise(setImmediate)
        a1(w).section({ name: 'late', order: 2000, text: 'Late.' })
      }
      return next()
    })
    const assembly = await w.app.systemPrompt.assemble({ scope: w.keys.agent1 })
    expect(assembly.sections.map((s) => s.name)).toContain('late')
    expect(renderPrompt(assembly)).toBe(plainRenders(assembly)[0])
  })
})
