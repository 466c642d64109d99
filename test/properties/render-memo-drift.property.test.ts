import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScope, render, SystemPrompt, type RenderedPrompt } from '../../src/index.js'

// The memoized render() of one scope, driven through a sequence of changes
// (insert, remove, edit a text, change a variable, move by order, a listener
// editing or dropping a section), against a from-scratch render of the same
// registrations in a fresh app after every step: the shortcuts a changed step
// takes (the kept prefix, moved parts, reused blocks and variables) must give
// exactly the prompt a first render gives (text, parts with offsets and
// substitutions, blocks, variables).

const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)

type Stability = 'static' | 'session' | 'volatile'
const VARIABLES = ['x', 'y', 'z'] as const

interface Spec {
  readonly scoped: boolean
  readonly order: number
  readonly text: string
  readonly stability: Stability
  readonly cacheBreakpoint: boolean
  readonly required: boolean
  readonly interpolate: boolean
  /** Registered with a plain string (a static section: an edit re-registers it) instead of a signal. */
  readonly fixed: boolean
}

const piece = fc.oneof(
  { arbitrary: fc.constantFrom(...VARIABLES).map((name) => `{{${name}}}`), weight: 3 },
  { arbitrary: fc.constantFrom('{{x}}{{y}}', '{{y}}{{x}}{{z}}'), weight: 1 },
  { arbitrary: fc.constantFrom('a', 'bc', ' ', '\n', 'é', '😀', '{', '}'), weight: 4 },
)
const text = fc.array(piece, { maxLength: 5 }).map((pieces) => pieces.join(''))
const value = fc.constantFrom('', 'v', 'vv', 'v', '😀')
const spec: fc.Arbitrary<Spec> = fc.record({
  scoped: fc.boolean(),
  order: fc.integer({ min: 0, max: 6 }),
  text,
  stability: fc.constantFrom<Stability>('static', 'session', 'volatile'),
  cacheBreakpoint: fc.boolean(),
  required: fc.boolean(),
  interpolate: fc.boolean(),
  fixed: fc.boolean(),
})

type Op =
  | { readonly kind: 'insert'; readonly spec: Spec }
  | { readonly kind: 'remove'; readonly at: number }
  | { readonly kind: 'edit'; readonly at: number; readonly text: string }
  | { readonly kind: 'variables'; readonly values: readonly (string | null)[] }
  | { readonly kind: 'move'; readonly at: number; readonly order: number }
  | { readonly kind: 'listener'; readonly at: number; readonly drop: boolean }
  | { readonly kind: 'none' }

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: spec.map((s) => ({ kind: 'insert' as const, spec: s })), weight: 3 },
  { arbitrary: fc.nat(20).map((at) => ({ kind: 'remove' as const, at })), weight: 2 },
  { arbitrary: fc.tuple(fc.nat(20), text).map(([at, t]) => ({ kind: 'edit' as const, at, text: t })), weight: 3 },
  // Several values at once: `{{x}}{{y}}` may keep its output while its values move.
  { arbitrary: fc.array(fc.option(value), { minLength: VARIABLES.length, maxLength: VARIABLES.length }).map((values) => ({ kind: 'variables' as const, values })), weight: 3 },
  { arbitrary: fc.tuple(fc.nat(20), fc.integer({ min: 0, max: 6 })).map(([at, order]) => ({ kind: 'move' as const, at, order })), weight: 2 },
  { arbitrary: fc.tuple(fc.integer({ min: -1, max: 20 }), fc.boolean()).map(([at, drop]) => ({ kind: 'listener' as const, at, drop })), weight: 1 },
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 1 },
)


/** A section as registered: its spec, its live text and the disposer of the app that holds it. */
interface Live {
  readonly name: string
  readonly spec: Spec
  order: number
  readonly text: Signal<string>
  dispose: () => unknown
}

/** What a listener does this step: edit (append `!`) or drop the named section; `undefined`: nothing. */
type Rewrite = { readonly name: string; readonly drop: boolean } | undefined

const KEY = { name: 'agent' }

async function mountWorld(): Promise<{ app: Context; global: SystemPrompt; scoped: SystemPrompt }> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  let scoped!: SystemPrompt
  await app.inject(['systemPrompt'], (ctx) => {
    scoped = createScope(ctx, KEY).ctx.systemPrompt
  })
  return { app, global: app.systemPrompt, scoped }
}

function listen(app: Context, rewrite: () => Rewrite): void {
  app.on('system-prompt/assemble', async (presentation, _context, next) => {
    const target = rewrite()
    if (target !== undefined) {
      presentation.sections = target.drop
        ? presentation.sections.filter((section) => section.name !== target.name)
        : presentation.sections.map((section) => (section.name === target.name ? { ...section, text: `${section.text}!` } : section))
    }
    return next()
  })
}

function register(world: { global: SystemPrompt; scoped: SystemPrompt }, name: string, spec: Spec, order: number, source: Signal<string> | string): () => unknown {
  const { scoped, stability, cacheBreakpoint, required, interpolate } = spec
  return (scoped ? world.scoped : world.global).section({ name, order, text: source, stability, cacheBreakpoint, required, interpolate })
}

/** The rendered prompt as plain data (see `plain`), or the message of the error rendering threw. */
function outcome(rendering: () => RenderedPrompt, parts: boolean, blocks: boolean): unknown {
  try {
    return plain(rendering(), parts, blocks)
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/** The outcome of the current registrations, rendered once in a fresh app. */
async function fromScratch(live: readonly Live[], values: Readonly<Record<string, string>>, rewrite: Rewrite, parts: boolean, blocks: boolean): Promise<unknown> {
  const world = await mountWorld()
  for (const name of VARIABLES) world.global.variable(name, values[name]!)
  for (const entry of live) register(world, entry.name, entry.spec, entry.order, entry.text.value)
  listen(world.app, () => rewrite)
  const assembly = await world.global.assemble({ scope: KEY })
  // The expected blocks always come from built parts (the memoized side may
  // build them from the memo's outputs alone, when its loop reads no parts).
  return outcome(() => {
    const rendered = render(assembly)
    void rendered.parts
    return rendered
  }, parts, blocks)
}

/** The prompt as plain data: its text, and the parts (with the variables) and blocks when asked for. */
function plain(rendered: RenderedPrompt, parts: boolean, blocks: boolean): unknown {
  return {
    text: rendered.text,
    parts: parts ? rendered.parts.map((part) => ({ ...part, substitutions: part.substitutions.map((s) => ({ ...s })), variables: [...part.variables] })) : undefined,
    variables: parts ? rendered.variables.map((variable) => ({ ...variable })) : undefined,
    blocks: blocks ? rendered.blocks.map((block) => ({ ...block, parts: [...block.parts] })) : undefined,
  }
}

/** One step: up to three changes before the assembly (a churn step removes one section and inserts another). */
const step = fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 3 }), readSections: fc.boolean(), readBlocks: fc.boolean(), readParts: fc.boolean() })

type Step = { readonly ops: readonly Op[]; readonly readSections: boolean; readonly readBlocks: boolean; readonly readParts: boolean }

/**
 * Drives one scope through `steps` against from-scratch renders, with or
 * without a listener on the assemble waterfall (`listening`).
 */
async function drift(listening: boolean, initial: readonly Spec[], steps: readonly Step[]): Promise<void> {
  const world = await mountWorld()
  const variables = Object.fromEntries(VARIABLES.map((name) => [name, signal('v')])) as Record<string, Signal<string>>
  for (const name of VARIABLES) world.global.variable(name, variables[name]!)
  let rewrite: Rewrite
  if (listening) listen(world.app, () => rewrite)
  const live: Live[] = []
  let minted = 0
  const add = (s: Spec, order = s.order, name = `s${minted++}`, text = signal(s.text)): void => {
    live.push({ name, spec: s, order, text, dispose: register(world, name, s, order, s.fixed ? text.value : text) })
  }
  for (const s of initial) add(s)
  for (const { ops, readSections, readBlocks, readParts } of steps) {
    for (const op of ops) {
      const at = 'at' in op && live.length > 0 ? op.at % live.length : -1
      if (op.kind === 'insert') add(op.spec)
      else if (op.kind === 'remove' && at >= 0) live.splice(at, 1)[0]!.dispose()
      else if (op.kind === 'edit' && at >= 0) {
        const edited = live[at]!
        edited.text.value = op.text
        if (edited.spec.fixed) {
          // A static text changes by registering it again (same name and order).
          edited.dispose()
          edited.dispose = register(world, edited.name, edited.spec, edited.order, op.text)
        }
      }
      else if (op.kind === 'variables') op.values.forEach((v, i) => v !== null && (variables[VARIABLES[i]!]!.value = v))
      else if (op.kind === 'move' && at >= 0) {
        const [moved] = live.splice(at, 1)
        moved!.dispose()
        add(moved!.spec, op.order, moved!.name, moved!.text)
      } else if (op.kind === 'listener' && listening) rewrite = at >= 0 && op.at >= 0 ? { name: live[at]!.name, drop: op.drop } : undefined
    }
    const assembly = await world.global.assemble({ scope: KEY })
    if (readSections) void assembly.sections
    const values = Object.fromEntries(VARIABLES.map((name) => [name, variables[name]!.value]))
    // Read as a loop would (the text, and the parts or blocks or not), so a later step also starts from fields nobody read.
    const actual = outcome(() => render(assembly), readParts, readBlocks)
    expect(actual).toEqual(await fromScratch(live, values, rewrite, readParts, readBlocks))
  }
}

describe('the memoized render of a changing scope', () => {
  it('equals a from-scratch render of the same registrations after every insert, remove, edit, value change, move and listener edit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { maxLength: 6 }), fc.array(step, { minLength: 1, maxLength: 10 }), (initial, steps) => drift(true, initial, steps)),
      { numRuns },
    )
  })

  it('equals a from-scratch render after every change when no listener runs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { maxLength: 12 }), fc.array(step, { minLength: 1, maxLength: 10 }), (initial, steps) => drift(false, initial, steps)),
      { numRuns },
    )
  })
})
