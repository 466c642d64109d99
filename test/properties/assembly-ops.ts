import fc from 'fast-check'
import { expect } from 'vitest'
import {
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  TOOL_ORDER_REST,
  type SystemPromptConfig,
} from '../../src/index.js'

// The generated inputs of the assembly properties (a random config, a pool of
// tool results and a list of operations) and the outcome comparison shared by
// the memoized engine and the oracle. Everything a generated value refers to
// (a scope, a signal, a registration) is an index resolved against the run's
// world, so shrinking an operation list never leaves a dangling reference.
//
//   global ─ preset ─ team ─┬─ agent ─ sub        (the initial parent links)
//                           └─ sibling

export const SCOPE_NAMES = ['preset', 'team', 'agent', 'sub', 'sibling'] as const
/** The layer index standing for the global layer (and, for views, the global view). */
export const GLOBAL = SCOPE_NAMES.length
export const INITIAL_PARENTS: readonly (number | undefined)[] = [undefined, 0, 1, 2, 1]

export const SECTION_NAMES = ['intro', 'rules', 'notes', HARNESS_IDENTITY_SECTION, PERSONA_PREFIX_SECTION] as const
export const CONTEXT_NAMES = ['cwd', 'time', 'todo'] as const
export const VARIABLE_NAMES = ['a', 'b', 'c'] as const
export const TOOL_NAMES = ['bash', 'read', 'grep', 'edit'] as const

/** An outcome of one call on one engine, reduced to what the two must agree on: the value, or the whole error message. */
export type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string }

function failure(error: unknown): Outcome<never> {
  return { ok: false, message: error instanceof Error ? `${error.name}: ${error.message}` : `thrown ${String(error)}` }
}

/** Runs `run`, turning a throw into a failure carrying the error's class and message. */
export function attempt<T>(run: () => T): Outcome<T> {
  try {
    return { ok: true, value: run() }
  } catch (error) {
    return failure(error)
  }
}

/** Awaits `run`, turning a rejection into a failure carrying the error's class and message. */
export async function attemptAsync<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() }
  } catch (error) {
    return failure(error)
  }
}

/**
 * The string-keyed data of a result, recursively: what a harness sees and
 * JSON keeps. Symbol-keyed bookkeeping (each engine remembers the scope a
 * result was made for in its own symbol) is left out; whether both engines
 * remember it alike is checked by refreshing with another scope.
 */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = plain((value as Record<string, unknown>)[key])
  return out
}

/** Both engines failed with the same error class and the same whole message, or both produced equal data. */
export function expectSame<T>(mine: Outcome<T>, theirs: Outcome<T>, what: string): void {
  if (mine.ok !== theirs.ok) {
    const describe = (o: Outcome<T>) => (o.ok ? `resolved ${JSON.stringify(o.value)}` : `rejected: ${o.message}`)
    throw new Error(`${what}: engine ${describe(mine)}\n  but oracle ${describe(theirs)}`)
  }
  if (!mine.ok && !theirs.ok) {
    expect(mine.message, `${what}: the engine's error message (expected: the oracle's)`).toBe(theirs.message)
    return
  }
  expect(plain((mine as { value: T }).value), what).toStrictEqual(plain((theirs as { value: T }).value))
}

// ── generated inputs ─────────────────────────────────────────────────────────

/** Section/context text: mostly well-formed templates, some literal braces, a few broken references. */
export const textArb = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('', 'plain', 'Hi {{a}}.', '{{a}}{{b}}', 'c={{c}}', '{{b}} and {{a}}') },
  { weight: 3, arbitrary: fc.constantFrom('lit {{a', '}} {{a}} }}', '{{{a}}') },
  { weight: 1, arbitrary: fc.constantFrom('{{zz}}', '{{ a }}', '{{constructor}}', '{{zz}} then {{ a }}') },
)
const valueArb = fc.constantFrom('x', 'y', '', '{{b}}')
/** `true` one time in five. */
const rarely = fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
const orderArb = fc.constantFrom(-1000, 0, 0, 1, 1, 0.5, 500, 10200)
const layerArb = fc.integer({ min: 0, max: GLOBAL })

export type TextSpec = { k: 'string'; s: string } | { k: 'signal'; i: number } | { k: 'fn'; s: string }
export type VariableSpec =
  | { k: 'string'; s: string }
  | { k: 'signal'; i: number }
  | { k: 'fn'; mode: 'cell' | 'scope' | 'boom' }
export type ToolSpec = { k: 'fn' | 'signal'; i: number }

const textSpecArb: fc.Arbitrary<TextSpec> = fc.oneof(
  { weight: 3, arbitrary: textArb.map((s) => ({ k: 'string' as const, s })) },
  { weight: 2, arbitrary: fc.nat(1).map((i) => ({ k: 'signal' as const, i })) },
  { weight: 2, arbitrary: textArb.map((s) => ({ k: 'fn' as const, s })) },
)
const variableSpecArb: fc.Arbitrary<VariableSpec> = fc.oneof(
  { weight: 3, arbitrary: valueArb.map((s) => ({ k: 'string' as const, s })) },
  { weight: 2, arbitrary: fc.nat(1).map((i) => ({ k: 'signal' as const, i })) },
  { weight: 2, arbitrary: fc.constantFrom('cell', 'cell', 'scope', 'boom').map((mode) => ({ k: 'fn' as const, mode })) },
)

export type Op =
  | { t: 'section'; at: number; name: string; order: number; text: TextSpec; interpolate: boolean; complete: boolean }
  | { t: 'context'; at: number; name: string; order: number; text: TextSpec; interpolate: boolean; required: boolean }
  | { t: 'variable'; at: number; name: string; src: VariableSpec }
  | { t: 'tools'; at: number; src: ToolSpec }
  | { t: 'suppress'; at: number }
  | { t: 'listen'; at: number; name: string; rewrite: boolean; bad: 'no' | 'section' | 'context' }
  | { t: 'dispose'; pick: number }
  | { t: 'disposeScope'; s: number }
  | { t: 'remint'; s: number }
  | { t: 'setText'; i: number; s: string }
  | { t: 'setValue'; i: number; v: string | undefined }
  | { t: 'setTools'; i: number; r: number }
  | { t: 'setCell'; text: string; value: string | undefined; tools: number; boom: boolean }
  | { t: 'rebind'; s: number; target: number }
  | { t: 'accept'; view: number; prepare: boolean }
  | { t: 'refresh'; view: number }
  | { t: 'copy'; view: number; how: CopyKind }
  | { t: 'refreshAs'; view: number; as: number }
  | { t: 'mutateTool'; r: number; k: number; how: 'rename' | 'parameters' | 'description'; to: string }
  | { t: 'teardownAssemble'; s: number }

/** How an accepted result is copied before it is refreshed (SPEC §2 Reliability). */
export type CopyKind = 'spread' | 'deep spread' | 'structuredClone' | 'JSON'

/** Copies an accepted result the way a harness might persist or pass it on. */
export function copyResult<T extends object>(value: T, how: CopyKind): T {
  if (how === 'spread') return { ...value }
  if (how === 'deep spread') {
    const contexts = (value as { contexts?: object[] }).contexts?.map((c) => ({ ...c }))
    return { ...value, contexts }
  }
  if (how === 'structuredClone') return structuredClone(value)
  return JSON.parse(JSON.stringify(value)) as T
}

const scopeIndexArb = fc.nat(GLOBAL - 1)

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('section' as const),
      at: layerArb,
      name: fc.constantFrom(...SECTION_NAMES),
      order: orderArb,
      text: textSpecArb,
      interpolate: rarely.map((literal) => !literal),
      complete: rarely,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('context' as const),
      at: layerArb,
      name: fc.constantFrom(...CONTEXT_NAMES),
      order: orderArb,
      text: textSpecArb,
      interpolate: fc.boolean(),
      required: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('variable' as const),
      at: layerArb,
      name: fc.constantFrom(...VARIABLE_NAMES),
      src: variableSpecArb,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('tools' as const),
      at: layerArb,
      src: fc.record({ k: fc.constantFrom('fn' as const, 'signal' as const), i: fc.nat(3) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('suppress' as const), at: layerArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('listen' as const),
      at: layerArb,
      name: fc.constantFrom('note', ...CONTEXT_NAMES),
      rewrite: fc.boolean(),
      bad: fc.constantFrom('no', 'no', 'no', 'no', 'section', 'context'),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('dispose' as const), pick: fc.nat(63) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('disposeScope' as const), s: scopeIndexArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('remint' as const), s: scopeIndexArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('setText' as const), i: fc.nat(1), s: textArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('setValue' as const), i: fc.nat(1), v: fc.option(valueArb, { nil: undefined }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('setTools' as const), i: fc.nat(1), r: fc.nat(3) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('setCell' as const),
      text: fc.constantFrom('', '!', ' {{c}}', '}}'),
      value: fc.option(valueArb, { nil: undefined }),
      tools: fc.nat(3),
      boom: rarely,
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('rebind' as const), s: scopeIndexArb, target: fc.nat(GLOBAL) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('accept' as const), view: fc.nat(GLOBAL), prepare: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('refresh' as const), view: fc.nat(GLOBAL) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('copy' as const),
      view: fc.nat(GLOBAL),
      how: fc.constantFrom<CopyKind>('spread', 'deep spread', 'structuredClone', 'JSON'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('refreshAs' as const), view: fc.nat(GLOBAL), as: fc.nat(GLOBAL) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('mutateTool' as const),
      r: fc.nat(3),
      k: fc.nat(1),
      how: fc.constantFrom('rename' as const, 'parameters' as const, 'description' as const),
      to: fc.constantFrom(...TOOL_NAMES, 'zap'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('teardownAssemble' as const), s: scopeIndexArb }) },
)

/** A tool provider result in the run's pool, built once so providers hand back the same object. */
export interface ResultSpec {
  readonly names: readonly string[]
  readonly known: readonly string[] | undefined
}

const resultSpecArb: fc.Arbitrary<ResultSpec> = fc.record({
  names: fc.oneof(
    { weight: 12, arbitrary: fc.subarray([...TOOL_NAMES], { maxLength: 2 }) },
    { weight: 1, arbitrary: fc.constant([TOOL_ORDER_REST]) },
  ),
  known: fc.option(fc.subarray([...TOOL_NAMES]), { nil: undefined, freq: 3 }),
})

export interface WorldConfig {
  readonly config: SystemPromptConfig
  readonly results: readonly ResultSpec[]
}

const toolOrderArb = fc
  .tuple(
    fc.shuffledSubarray([...TOOL_NAMES], { maxLength: 3 }),
    fc.nat(),
    fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  )
  .map(([names, at, ghost]) => {
    const order: string[] = [...names]
    order.splice(at % (order.length + 1), 0, TOOL_ORDER_REST)
    if (ghost) order.push('ghost')
    return order
  })

export const worldConfigArb: fc.Arbitrary<WorldConfig> = fc.record({
  config: fc
    .record({
      includeHarnessIdentity: fc.boolean(),
      identity: fc.constantFrom('You are an AI agent.', 'I am Loom.', 'I am {{a}}.'),
      includeRuntimeContext: rarely.map((suppressed) => !suppressed),
      personaPrefix: fc.constantFrom('', 'Prefix.', 'Be {{a}}.'),
      personaSuffix: fc.constantFrom('', 'Suffix.', 'Bye {{b}}.'),
      toolOrder: fc.option(toolOrderArb, { nil: undefined }),
      bands: fc.boolean(),
    })
    // An absent toolOrder is left out, not passed as `undefined`.
    .map(({ toolOrder, bands, ...rest }): SystemPromptConfig => ({
      ...rest,
      ...(toolOrder === undefined ? {} : { toolOrder }),
      ...(bands ? { sectionOrders: { DEPLOY_NOTES: 4200 }, contextOrders: { TICKET: 130 } } : {}),
    })),
  results: fc.array(resultSpecArb, { minLength: 4, maxLength: 4 }),
})

/** How failure messages name view `v`. */
export function viewName(v: number): string {
  return v === GLOBAL ? 'the global view' : `scope "${SCOPE_NAMES[v]}"`
}
