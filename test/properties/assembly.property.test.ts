import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  renderContextSections,
  renderContextSnapshot,
  renderPrompt,
  scopeChainOf,
  type LayerRef,
  type PromptAssembly,
  type PromptPreparation,
} from '../../src/index.js'
import {
  referenceRenderContextSections,
  referenceRenderContextSnapshot,
  referenceRenderPrompt,
} from '../reference/index.js'
import {
  attempt,
  attemptAsync,
  copyResult,
  expectSame,
  GLOBAL,
  opArb,
  SCOPE_NAMES,
  viewName,
  worldConfigArb,
  type CopyKind,
} from './assembly-ops.js'
import { expectSameRefreshAs } from './assembly-acceptance.js'
import { World, type Registration } from './assembly-world.js'

/** Headroom for a loaded machine; the file takes about 12 s of CPU at the default run count. */
const TIMEOUT = 120_000

// Model-based runs: one Cordis app per run with the memoized `SystemPrompt`
// and the recompute-everything `ReferenceSystemPrompt` (the oracle, which
// imports nothing from src/), the same random config, five scopes and a
// random list of operations mirrored on both: registrations and disposals,
// signal writes, rebinds, listeners (some returning malformed items), tools
// mutated in place, refreshes chained on refreshes, copies of accepted
// results (spread, deep spread, structuredClone, JSON), refreshes for another
// scope, and scope teardown while a change listener re-assembles the scope.
// After every operation, every view is checked three ways:
//   1. differential: assemble/prepare/refreshContext/render agree with the
//      oracle, errors by class and whole message;
//   2. laws stated against the plain model (not the oracle): order, shadowing,
//      suppression, provider calls (providerEvaluations counts exactly the
//      function providers called; a shadowed one is never called), tools
//      deep-frozen and sharing no object with their providers;
//   3. memoization: an unchanged registry re-derives and re-renders nothing.

// Lower than the other property files' 200: each run mirrors up to 20 operations on two engines and
// checks six views after each. `PROPERTY_RUNS=200` for a deeper run.
const numRuns = Number(process.env.PROPERTY_RUNS ?? 60)
const setupArb = fc.record({ world: worldConfigArb, ops: fc.array(opArb, { maxLength: 20, size: 'max' }) })

type Check = (world: World, v: number, where: string) => Promise<void>

/** Runs the generated operations, calling `check` for every view before the first and after each one. */
async function run(check: Check): Promise<void> {
  await fc.assert(
    fc.asyncProperty(setupArb, async ({ world: config, ops }) => {
      const world = await World.create(config)
      const checkAll = async (step: string) => {
        SCOPE_NAMES.forEach((_, s) => {
          expect(scopeChainOf(world.keys[s]), `chain of ${SCOPE_NAMES[s]} after ${step}`).toEqual(
            world.chainOf(s).map((at) => world.keys[at]),
          )
        })
        for (let v = 0; v <= GLOBAL; v++) await check(world, v, `${viewName(v)} after ${step}`)
      }
      await checkAll('setup')
      for (const [index, op] of ops.entries()) {
        await world.apply(op)
        await checkAll(`step ${index} (${op.t})`)
      }
    }),
    { numRuns },
  )
}

// ── 1. differential ─────────────────────────────────────────────────────────

/** The renders of two agreeing results agree (renderPrompt only when they carry sections). */
function expectSameRenders(mine: PromptPreparation, theirs: PromptPreparation, what: string): void {
  if ('sections' in mine) {
    expectSame(
      attempt(() => renderPrompt(mine as PromptAssembly)),
      attempt(() => referenceRenderPrompt(theirs as PromptAssembly)),
      `renderPrompt() of ${what}`,
    )
  }
  expectSame(
    attempt(() => renderContextSections(mine)),
    attempt(() => referenceRenderContextSections(theirs)),
    `renderContextSections() of ${what}`,
  )
  expectSame(
    attempt(() => renderContextSnapshot(mine)),
    attempt(() => referenceRenderContextSnapshot(theirs)),
    `renderContextSnapshot() of ${what}`,
  )
}

/** Both calls reject alike or resolve equal, and then render alike. */
async function expectSameResults(
  mine: () => PromptPreparation | Promise<PromptPreparation>,
  theirs: () => PromptPreparation | Promise<PromptPreparation>,
  what: string,
): Promise<void> {
  const a = await attemptAsync(async () => mine())
  const b = await attemptAsync(async () => theirs())
  expectSame(a, b, what)
  if (a.ok && b.ok) expectSameRenders(a.value, b.value, what)
}

const COPY_KINDS: readonly CopyKind[] = ['JSON', 'structuredClone', 'spread', 'deep spread']

const agreesWithOracle: Check = async (world, v, where) => {
  const { sp, ref } = world
  const context = world.context(v)
  await expectSameResults(() => sp.assemble(context), () => ref.assemble(context), `assemble() of ${where}`)
  await expectSameResults(() => sp.prepare(context), () => ref.prepare(context), `prepare() of ${where}`)
  const accepted = world.accepted[v]
  if (accepted === undefined) return
  await expectSameResults(
    () => sp.refreshContext(accepted.mine, context),
    () => ref.refreshContext(accepted.theirs, context),
    `refreshContext() of ${where}`,
  )
  // A copy of it refreshes like the original (the copy kind rotates with the view).
  const how = COPY_KINDS[v % COPY_KINDS.length]!
  await expectSameResults(
    () => sp.refreshContext(copyResult(accepted.mine, how), context),
    () => ref.refreshContext(copyResult(accepted.theirs, how), context),
    `refreshContext() of a ${how} copy of the accepted result of ${where}`,
  )
  // The same result refreshed for the next view's scope (a scope mismatch throws naming both).
  expectSameRefreshAs(world, v, (v + 1) % (GLOBAL + 1))
  // An earlier accepted result handed back as the preparation: its contexts and
  // variables are used, and rendering it alternates variable sets on one memo.
  await expectSameResults(
    () => sp.assemble(context, accepted.mine),
    () => ref.assemble(context, accepted.theirs),
    `assemble() with the accepted preparation of ${where}`,
  )
}

test('the memoized engine agrees with the recompute-everything oracle after every operation', async () => {
  await run(agreesWithOracle)
}, TIMEOUT)

// ── 2. laws against the plain model ──────────────────────────────────────────

interface Expected {
  name: string
  layer: LayerRef
  shadows: LayerRef[]
  order: number
  flagged: boolean
  registration: Registration
}

/** The effective entries of `kind` in view `v` by the model: the nearest layer wins a name; shadows farthest first. */
function effective(world: World, v: number, kind: Registration['kind']): Map<string, Expected> {
  const ref = (layer: number): LayerRef => (layer === GLOBAL ? 'global' : world.keys[layer]!)
  const merged = new Map<string, Expected>()
  for (const layer of [GLOBAL, ...world.chainOf(v).reverse()]) {
    for (const r of world.registrations) {
      if (!r.alive || r.kind !== kind || r.layer !== layer) continue
      const hidden = merged.get(r.name)
      merged.set(r.name, {
        name: r.name,
        layer: ref(layer),
        shadows: hidden === undefined ? [] : [...hidden.shadows, hidden.layer],
        order: r.order,
        flagged: r.flagged,
        registration: r,
      })
    }
  }
  return merged
}

/** Ascending order, ties by code-unit name: the law, written out. */
/** The registry sets `order` on every section it produced (it is optional in `AssembledSection`). */
type Ordered = { order: number; name: string }

function precedes(a: Ordered, b: Ordered): boolean {
  return a.order < b.order || (a.order === b.order && a.name < b.name)
}

function sortedByLaw<T extends { order: number; name: string }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => (precedes(a, b) ? -1 : precedes(b, a) ? 1 : 0))
}

const inspected = ({ name, layer, shadows }: Expected) => ({ name, layer, shadows })

/** Every object reachable from `value` (own properties, symbols included). */
function reachable(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value !== 'object' || value === null || into.has(value)) return into
  into.add(value)
  for (const key of Reflect.ownKeys(value)) reachable((value as Record<PropertyKey, unknown>)[key], into)
  return into
}

/** Tools are deep-frozen and share no object with any provider's result (detached copies). */
function expectDetachedTools(world: World, assembly: PromptAssembly, where: string): void {
  const owned = new Set<object>()
  for (const result of world.results) reachable(result, owned)
  for (const signal of world.toolSignals) reachable(signal.peek(), owned)
  for (const tool of assembly.tools) {
    for (const object of reachable(tool)) {
      expect(Object.isFrozen(object), `tool "${tool.name}" of ${where} is deep-frozen`).toBe(true)
      expect(owned.has(object), `tool "${tool.name}" of ${where} shares no object with its provider`).toBe(false)
    }
  }
}

const obeysLaws: Check = async (world, v, where) => {
  const { sp } = world
  const scope = world.context(v).scope
  const sections = effective(world, v, 'section')
  const contexts = effective(world, v, 'context')
  const inspection = sp.inspect(scope)
  // Shadowing: each name comes from the nearest layer registering it.
  expect(inspection.sections, `inspect().sections of ${where}`).toStrictEqual(sortedByLaw(sections.values()).map(inspected))
  expect(inspection.contexts, `inspect().contexts of ${where}`).toStrictEqual(sortedByLaw(contexts.values()).map(inspected))
  expect(
    [...inspection.variables].sort((a, b) => (a.name < b.name ? -1 : 1)),
    `inspect().variables of ${where}`,
  ).toStrictEqual([...effective(world, v, 'variable').values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(inspected))
  const tools = [GLOBAL, ...world.chainOf(v).reverse()].flatMap((layer) =>
    world.registrations
      .filter((r) => r.alive && r.kind === 'tools' && r.layer === layer)
      .map((_, index) => ({ layer: layer === GLOBAL ? 'global' : world.keys[layer]!, index })),
  )
  expect(inspection.tools, `inspect().tools of ${where}`).toStrictEqual(tools)

  const visible = [GLOBAL, ...world.chainOf(v)]
  const callsBefore = world.registrations.map((r) => r.calls?.n ?? 0)
  const evaluationsBefore = sp.stats().providerEvaluations
  const assembly = await attemptAsync(() => sp.assemble(world.context(v)))
  // Provider calls: providerEvaluations counts exactly the function providers
  // called, a shadowed (or invisible, or disposed) provider is never called,
  // and an effective one at most once per assembly.
  const called = world.registrations.map((r, i) => (r.calls?.n ?? 0) - callsBefore[i]!)
  expect(sp.stats().providerEvaluations - evaluationsBefore, `providerEvaluations assembling ${where}`).toBe(
    called.reduce((sum, n) => sum + n, 0),
  )
  const winners = new Set(
    [sections, contexts, effective(world, v, 'variable')].flatMap((map) => [...map.values()].map((e) => e.registration)),
  )
  world.registrations.forEach((r, i) => {
    if (r.calls === undefined) return
    const live = r.kind === 'tools' ? r.alive && visible.includes(r.layer) : winners.has(r)
    const what = `calls of the ${live ? 'effective' : 'shadowed, invisible or disposed'} ${r.kind} "${r.name}" provider assembling ${where}`
    expect(called[i], what).toBeLessThanOrEqual(live ? 1 : 0)
  })
  const complete = [...sections.values()].filter((entry) => entry.flagged)
  if (complete.length > 1) {
    // Rejected before any section or tool is read (a failing prepare may reject first).
    const prepared = await attemptAsync(() => sp.prepare(world.context(v)))
    if (prepared.ok) expect(assembly.ok ? 'resolved' : assembly.message, `assemble() of ${where}`).toMatch('multiple complete prompt sections')
    else expect(assembly.ok ? 'resolved' : assembly.message, `assemble() of ${where}`).toBe(prepared.message)
  }
  if (!assembly.ok) return
  const { value } = assembly as { value: PromptAssembly }
  expectDetachedTools(world, value, where)
  const heard = (kind: Registration['kind'], flagged?: boolean) =>
    world.registrations.filter(
      (r) => r.alive && r.kind === kind && visible.includes(r.layer) && (flagged === undefined || r.flagged === flagged),
    ).length
  if (complete.length === 1) {
    // A complete section is restored as the only one, whatever a listener did.
    expect(value.sections.map((s) => [s.name, s.complete]), `complete section of ${where}`).toEqual([[complete[0]!.name, true]])
  } else {
    // Ordering: by order, then code-unit name (each rewriting listener reverses it, and the waterfall's
    // result is authoritative); every effective name once, at its supplier's order.
    const plan = heard('listen', true) % 2 === 1 ? [...value.sections].reverse() : value.sections
    plan.forEach((section, i) => {
      if (i > 0) expect(precedes(plan[i - 1] as Ordered, section as Ordered), `section order in ${where}`).toBe(true)
      expect(section.order, `order of "${section.name}" in ${where}`).toBe(sections.get(section.name)?.order)
    })
    expect(plan.map((s) => s.name), `sections of ${where}`).toEqual(sortedByLaw(sections.values()).map((s) => s.name))
  }
  // Suppression: while a suppressor is visible, only effective required contexts survive.
  if (heard('suppress') > 0) {
    for (const c of value.contexts) expect(contexts.get(c.name)?.flagged, `context "${c.name}" of suppressed ${where}`).toBe(true)
  }
  const toolNames = value.tools.map((t) => t.name)
  expect(new Set(toolNames).size, `tool names of ${where}`).toBe(toolNames.length)
  if (world.setup.config.toolOrder === undefined) {
    expect(toolNames, `tool order of ${where}`).toEqual(sortedByLaw(toolNames.map((name) => ({ name, order: 0 }))).map((t) => t.name))
  }
}

test('sections are ordered by (order, code-unit name) and every name comes from the nearest layer', async () => {
  await run(obeysLaws)
}, TIMEOUT)

// ── 3. memoization ───────────────────────────────────────────────────────────

const memoHolds: Check = async (world, v, where) => {
  const { sp } = world
  const context = world.context(v)
  const first = await attemptAsync(() => sp.assemble(context))
  if (!first.ok) return
  const prompt = attempt(() => renderPrompt(first.value))
  const snapshot = attempt(() => renderContextSnapshot(first.value))
  const before = sp.stats()
  const again = await sp.assemble(context)
  const between = sp.stats()
  expect(between.structureRecomputes - before.structureRecomputes, `structure recomputes re-assembling ${where}`).toBe(0)
  expect(again, `re-assembly of ${where}`).toStrictEqual(first.value)
  const rendersOf = (render: () => string, expected: string) => {
    const renders = sp.stats().sectionRenders
    expect(render(), `re-render of ${where}`).toBe(expected)
    return sp.stats().sectionRenders - renders
  }
  if (prompt.ok) expect(rendersOf(() => renderPrompt(again), prompt.value), `section renders re-rendering ${where}`).toBe(0)
  if (snapshot.ok) {
    expect(rendersOf(() => renderContextSnapshot(again), snapshot.value), `context renders re-rendering ${where}`).toBe(0)
  }
}

test('an unchanged registry re-derives no structure and re-renders no section', async () => {
  await run(memoHolds)
}, TIMEOUT)
