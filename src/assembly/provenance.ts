/**
 * Where an assembly came from, as data: for each section, context and
 * variable of the plan it was built from, the supplying layer and the
 * registration's declared options, plus the texts the registry collected
 * before the waterfall. Rendering reads it to label parts and errors, and the
 * step surface reads what rendering derived from it; nothing here is a live
 * view, a signal or a counter.
 *
 * It travels beside the result (an `assemble()`/`prepare()` result stays a
 * plain object that spreads, clones and serializes as one), together with the
 * engine's render slot for that scope. A copy that lost it renders from
 * scratch, with no layers: never with another assembly's labels.
 */

import type { ScopeKey } from '../scope/scope-key.js'
import type { ContextEntry, LayerRef, VariableEntry } from './entries.js'
import type { StabilityGuard } from './stability-hazard.js'
import type { PromptStats } from './stats.js'
import type { Stability } from './types.js'
import type { SectionPlan } from './view.js'
import { privateSlot } from './private-slot.js'

/** A registered section as it supplied an assembly. */
export interface SectionSource {
  readonly name: string
  readonly layer: LayerRef
  readonly order: number
  /** The declared stability, `undefined` when none was declared. */
  readonly stability: Stability | undefined
  readonly interpolate: boolean
  readonly complete: boolean
  readonly required: boolean
  readonly cacheBreakpoint: boolean
  readonly priority: number
}

/** A registered runtime context or variable as it supplied an assembly. */
export interface NamedSource {
  readonly name: string
  readonly layer: LayerRef
  /** The declared stability, `undefined` when none was declared. */
  readonly stability: Stability | undefined
}

/** Sources in plan order, and by name. */
export interface SourceTable<S extends { readonly name: string }> {
  readonly list: readonly S[]
  readonly byName: ReadonlyMap<string, S>
  /** Each name's index in `list`. */
  readonly indexOf: ReadonlyMap<string, number>
}

/** The provenance of one `prepare()` or `assemble()` result. */
export interface AssemblyProvenance {
  /** The scope it was made for; `undefined` for the global view. */
  readonly scope: ScopeKey | undefined
  /** The effective sections it was built from; absent on a preparation. */
  readonly sections?: SourceTable<SectionSource>
  /** Each section's text as collected before the `system-prompt/assemble` waterfall, by `sections.list` index. */
  readonly collected?: readonly string[]
  /** The effective runtime contexts it was prepared from. */
  readonly contexts: SourceTable<NamedSource>
  /** The effective variables it was prepared from. */
  readonly variables: SourceTable<NamedSource>
  /**
   * The required sections the assembly restored after the waterfall (a
   * listener dropped, edited or reordered them), in prompt order; absent or
   * empty when none was. Rendering marks their parts `restored`.
   */
  readonly restored?: readonly string[]
  /** Config `stabilityGuard` of the service that assembled it; the render enforces `'error'`. Absent: `'warn'`. */
  readonly stabilityGuard?: StabilityGuard
}

/**
 * The engine's per-scope handle under which the render layer keeps its
 * caches (held weakly there), with the counters its renders add to. A
 * released scope's slot is dropped, and its render caches with it.
 */
export interface RenderSlot {
  readonly stats: PromptStats
}

/**
 * The sections of an `assemble()` result whose `sections` array is built on
 * first read (see presentation.ts): while `handedOut` is false nobody has
 * seen or replaced that array, so the sections are exactly `plan`'s entries
 * with the collected texts, and rendering may read those instead.
 */
export interface DeferredSections {
  readonly plan: SectionPlan
  /** Set once the result's `sections` was read or assigned; never cleared. */
  handedOut: boolean
}

/** What travels beside a result: its provenance and its scope's render slot. */
export interface AssemblyRecord {
  readonly provenance: AssemblyProvenance
  readonly slot: RenderSlot
  /** Present on an `assemble()` result whose sections array is deferred. */
  readonly deferred?: DeferredSections
}

// Beside the exact result object, as a WeakMap entry would be (see private-slot.ts).
const records = privateSlot<AssemblyRecord>()

/** Records `record` beside `target` and returns `target`. */
export function withRecord<T extends object>(target: T, record: AssemblyRecord): T {
  records.set(target, record)
  return target
}

/** The record of a result made by `prepare`/`assemble`/`refreshContext`; `undefined` for anything else (a copy, say). */
export function recordOf(target: object): AssemblyRecord | undefined {
  return records.get(target)
}

/** The scope a result was assembled for (`undefined`: the global view). */
export interface AssembledFor {
  readonly scope: ScopeKey | undefined
}

// Stamped onto a `contexts` array the engine itself created for one result
// (never one a listener supplied, which it might share between scopes): a
// shallow spread of the result shares that array, so it still knows its
// scope. A structuredClone or JSON copy does not, and `refreshContext` then
// uses the scope it is given. The stamp never becomes enumerable data (a
// structuredClone of an agent object with methods would throw).
const scopes = privateSlot<AssembledFor>()

/** Records that the engine-made `contexts` array belongs to a result assembled for `scope`. */
export function recordScope(contexts: object, scope: ScopeKey | undefined): void {
  scopes.set(contexts, { scope })
}

/** The scope `result` was assembled for, when it (or the `contexts` array it shares) is known. */
export function assembledFor(result: { readonly contexts: object }): AssembledFor | undefined {
  const record = records.get(result)
  if (record !== undefined) return { scope: record.provenance.scope }
  return scopes.get(result.contexts)
}

/**
 * Sources in plan order; the two maps are built on first use (a render that
 * finds every section at its own index, the common case, never builds them).
 */
class LazySourceTable<S extends { readonly name: string }> implements SourceTable<S> {
  readonly list: readonly S[]
  #byName: Map<string, S> | undefined
  #indexOf: Map<string, number> | undefined

  constructor(list: readonly S[]) {
    this.list = list
  }

  get byName(): ReadonlyMap<string, S> {
    return (this.#byName ??= new Map(this.list.map((source) => [source.name, source])))
  }

  get indexOf(): ReadonlyMap<string, number> {
    return (this.#indexOf ??= new Map(this.list.map((source, index) => [source.name, index])))
  }
}

/** Up to this many sources, a look-up by name scans the list instead of building the `byName` map. */
const SCAN_LIMIT = 16

/**
 * The source named `name` in `table`. A short table (a scope's variables,
 * say) is scanned rather than given a map: the map would be one more table
 * per agent (~490 bytes for 13 variables) for a handful of look-ups.
 */
export function sourceNamed<S extends { readonly name: string }>(table: SourceTable<S>, name: string): S | undefined {
  const { list } = table
  if (list.length > SCAN_LIMIT) return table.byName.get(name)
  for (let i = 0; i < list.length; i++) if (list[i]!.name === name) return list[i]
  return undefined
}

// Plans are immutable and shared by every assembly made from them, so each
// plan's table is made once (a private slot on the plan's entries array, see
// private-slot.ts). A section plan carries its sources; a context or
// variable plan's are read off its entries, each of which carries its own.
const tables = privateSlot<SourceTable<{ readonly name: string }>>()

/** The sources of a section plan, made once per plan. */
export function sectionSourcesOf(plan: SectionPlan): SourceTable<SectionSource> {
  let table = tables.get(plan.entries) as SourceTable<SectionSource> | undefined
  if (table === undefined) tables.set(plan.entries, (table = new LazySourceTable(plan.sources)))
  return table
}

/** The sources of a context or variable plan, made once per plan. */
export function namedSourcesOf(entries: readonly (ContextEntry | VariableEntry)[]): SourceTable<NamedSource> {
  let table = tables.get(entries) as SourceTable<NamedSource> | undefined
  if (table === undefined) tables.set(entries, (table = new LazySourceTable(entries.map((entry) => entry.source))))
  return table
}
