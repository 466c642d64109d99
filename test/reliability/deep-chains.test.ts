import { Context } from 'cordis'
import { describe, expect, test, vi } from 'vitest'
import type { Pipeline as Engine } from '../../src/assembly/pipeline.js'
import { bindScopeParent, createScope, type Scope, type ScopeKey } from '../../src/index.js'
import { BARE, mount, names, ownSections } from '../assembly/system-prompt.fixtures.js'

// SPEC §2 Reliability: "No error is cached as a view's value … Parent chains at
// least 10,000 scopes deep assemble correctly (no recursion proportional to
// chain depth on the hot path)." Each scope's view is built on its parent's, so
// without care a deep chain's first read (or its first read after a global
// change) refreshes the whole chain recursively, and a stack overflow met
// while deriving is kept by the memo.

const DEPTH = 10_000

/** The service's engine, reached through its private symbol (internals on purpose: the layer store). */
function engineOf(app: Context): Engine {
  const service = app.systemPrompt as unknown as Record<symbol, unknown>
  const symbol = Object.getOwnPropertySymbols(service).find((s) => s.description === 'promptloom.engine')!
  return service[symbol] as Engine
}

async function minter(app: Context): Promise<Context> {
  let ctx!: Context
  await app.inject(['systemPrompt'], (injected) => {
    ctx = injected
  })
  return ctx
}

// Parent links are module-wide, so the 10,000 links are bound once and shared;
// each test mounts its own registry and furnishes three of the scopes.
const KEYS: ScopeKey[] = []
for (let i = 0; i < DEPTH; i++) {
  const key = { name: `link-${i}` }
  if (i > 0) bindScopeParent(key, KEYS[i - 1]!)
  KEYS.push(key)
}
const DEEPEST = KEYS[DEPTH - 1]!

/** Registers a section in the root, the middle and the deepest scope of the shared chain. */
async function furnishChain(app: Context): Promise<void> {
  const ctx = await minter(app)
  const furnished: [number, string][] = [
    [0, 'root'],
    [DEPTH >> 1, 'middle'],
    [DEPTH - 1, 'leaf'],
  ]
  for (const [i, section] of furnished) {
    const scope: Scope = createScope(ctx, KEYS[i]!, i === 0 ? {} : { parent: KEYS[i - 1]! })
    scope.ctx.systemPrompt.section({ name: section, order: i, text: `${section} text` })
  }
}

/** Runs `call` at every stack depth from the limit upwards until it returns without throwing. */
function nearTheStackLimit(call: () => void): number {
  let attempts = 0
  const descend = (): void => {
    try {
      descend()
    } catch {
      attempts++
      call()
    }
  }
  try {
    descend()
  } catch {
    // The outermost attempt threw too; the test's next call tells whether it left a mark.
  }
  return attempts
}

describe('deep parent chains', () => {
  test('a 10,000-deep chain assembles with every layer of the chain', async () => {
    const app = await mount(BARE)
    await furnishChain(app)
    const assembly = await app.systemPrompt.assemble({ scope: DEEPEST })
    expect(names(ownSections(assembly))).toEqual(['root', 'middle', 'leaf'])
  })

  test('a 10,000-deep chain assembles again after a global registration', async () => {
    const app = await mount(BARE)
    await furnishChain(app)
    await app.systemPrompt.assemble({ scope: DEEPEST })
    app.systemPrompt.section({ name: 'global', order: DEPTH, text: 'late global text' })
    const assembly = await app.systemPrompt.assemble({ scope: DEEPEST })
    expect(names(ownSections(assembly))).toEqual(['root', 'middle', 'leaf', 'global'])
  })

  test('a 10,000-deep chain inspects, naming the layer of each section', async () => {
    const app = await mount(BARE)
    await furnishChain(app)
    const own = app.systemPrompt.inspect(DEEPEST).sections.filter((entry) => entry.layer !== 'global')
    expect(own.map((entry) => [entry.name, entry.layer])).toEqual([
      ['root', KEYS[0]],
      ['middle', KEYS[DEPTH >> 1]],
      ['leaf', DEEPEST],
    ])
  })
})

describe('a fault while deriving a view is not cached', () => {
  test('a RangeError thrown while deriving fails that call, and the next call re-derives the view', async () => {
    const app = await mount(BARE)
    const ctx = await minter(app)
    const key = { name: 'agent' }
    createScope(ctx, key).ctx.systemPrompt.section({ name: 'task', order: 0, text: 'task text' })
    const store = engineOf(app).store
    const peek = store.peek.bind(store)
    vi.spyOn(store, 'peek').mockImplementationOnce((scope) => {
      peek(scope)
      throw new RangeError('Maximum call stack size exceeded')
    })
    await expect(app.systemPrompt.assemble({ scope: key })).rejects.toThrow(RangeError)
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: key })))).toEqual(['task'])
  })

  test('inspect() near the stack limit does not break a 2-level scope', async () => {
    const app = await mount(BARE)
    const ctx = await minter(app)
    const preset = { name: 'preset' }
    const agent = { name: 'agent' }
    createScope(ctx, preset).ctx.systemPrompt.section({ name: 'persona', order: 0, text: 'persona text' })
    createScope(ctx, agent, { parent: preset }).ctx.systemPrompt.section({ name: 'task', order: 1, text: 'task text' })
    // Several sweeps: frame sizes change as the code warms up, and so do the points where it overflows.
    for (let sweep = 0; sweep < 4; sweep++) {
      expect(nearTheStackLimit(() => app.systemPrompt.inspect(agent))).toBeGreaterThan(1)
      expect(names(app.systemPrompt.inspect(agent).sections)).toContain('task')
    }
    expect(names(ownSections(await app.systemPrompt.assemble({ scope: agent })))).toEqual(['persona', 'task'])
  })

  test('assemble() started near the stack limit does not break the global view', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'intro', order: 0, text: 'intro text' })
    const pending: Promise<unknown>[] = []
    nearTheStackLimit(() => void pending.push(app.systemPrompt.assemble().catch(() => undefined)))
    await Promise.all(pending)
    expect(names(ownSections(await app.systemPrompt.assemble()))).toEqual(['intro'])
  })
})
