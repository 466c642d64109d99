/**
 * Where an assembly came from, as data: for each section, context and
 * variable of the plan it was built from, the supplying layer and the
 * registration's declared options, plus the texts the registry collected
 * before the waterfall. Rendering reads it to label parts and errors, and the
 * step surface reads what rendering derived from it; nothing here is a live
 * view, a signal or a counter.
 */

import type { ScopeKey } from '../scope/scope-key.js'
import type { ContextEntry, LayerRef, VariableEntry } from './entries.js'
import type { StabilityGuard } from './stability-hazard.js'
import type { PromptStats } from './stats.js'
import type { Stability } from './types.js'
import type { SectionPlan } from './view.js'

/** A registered section as it supplied an assembly. */
export interface SectionSource {
  readonly name: string
  readonly layer: LayerRef
  readonly order: number
  /** `undefined` when no stability was declared. */
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
  /** `undefined` when no stability was declared. */
  readonly stability: Stability | undefined
}

/**
 * Sources in plan order. No name index beside `list`: every scope holds its
 * own tables, and an item is almost always at its own position in the plan
 * (`sourceIndex` looks there first), so a per-scope map would cost memory
 * for lookups that rarely happen.
 */
export interface SourceTable<S extends { readonly name: string }> {
  readonly list: readonly S[]
}

/** The provenance of one `prepare()` or `assemble()` result. */
export interface AssemblyProvenance {
  /** The scope it was made for; `undefined` for the global view. */
  readonly scope: ScopeKey | undefined
  /** The effective sections it was built from; absent on a preparation. */
  readonly sections?: SourceTable<SectionSource>
  /** Each section's text as collected before the `system-prompt/assemble` waterfall, by `sections.list` index. */
  readonly collected?: readonly string[]
  readonly contexts: SourceTable<NamedSource>
  readonly variables: SourceTable<NamedSource>
  /**
   * The required sections the assembly restored after the waterfall (a
   * listener dropped, edited or reordered them), in prompt order. Rendering
   * marks their parts `restored`.
   */
  readonly restored?: readonly string[]
  /** Config `stabilityGuard` of the service that assembled it; the render enforces `'error'`. Absent: `'warn'`. */
  readonly stabilityGuard?: StabilityGuard
}

/**
 * The engine's per-scope handle under which the render layer keeps its
 * memos (held weakly there). A released scope's slot is dropped, and its
 * render memos with it.
 */
export interface RenderSlot {
  readonly stats: PromptStats
}

/** What is known about a result the engine made: its provenance and its scope's render slot. */
export interface AssemblyRecord {
  readonly provenance: AssemblyProvenance
  readonly slot: RenderSlot
}

/**
 * The one place a result's record lives: keyed by the exact object that
 * `prepare()`, `assemble()` or `refreshContext()` returned. The result stays
 * a plain object (its keys, spread, JSON and `structuredClone` show nothing
 * extra), and a copy of it has no record: it renders from scratch, without
 * layers, never with another assembly's labels.
 */
const records = new WeakMap<object, AssemblyRecord>()

/** Records `record` for `target` and returns `target`. */
export function withRecord<T extends object>(target: T, record: AssemblyRecord): T {
  records.set(target, record)
  return target
}

/** The record of a result made by `prepare`/`assemble`/`refreshContext`; `undefined` for anything else (a copy, say). */
export function recordOf(target: object): AssemblyRecord | undefined {
  return typeof target === 'object' && target !== null ? records.get(target) : undefined
}

/** The scope a result was assembled for (`undefined`: the global view). */
export interface AssembledFor {
  readonly scope: ScopeKey | undefined
}

/**
 * The scope of a `contexts` array the engine itself created for one result
 * (never one a listener supplied, which it might share between scopes): a
 * shallow spread of the result shares that array, so `refreshContext` can
 * still refuse the wrong scope. A structuredClone or JSON copy does not, and
 * `refreshContext` then uses the scope it is given.
 */
const scopes = new WeakMap<object, AssembledFor>()

/** Records that the engine-made `contexts` array belongs to a result assembled for `scope`. */
export function recordScope(contexts: object, scope: ScopeKey | undefined): void {
  scopes.set(contexts, { scope })
}

/** The scope `result` was assembled for, when it (or the `contexts` array it shares) is known. */
export function assembledFor(result: { readonly contexts: object }): AssembledFor | undefined {
  const record = recordOf(result)
  if (record !== undefined) return { scope: record.provenance.scope }
  const { contexts } = result
  return typeof contexts === 'object' && contexts !== null ? scopes.get(contexts) : undefined
}

function tableOf<S extends { readonly name: string }>(list: readonly S[]): SourceTable<S> {
  return { list }
}

/**
 * The index in `table` of the source named `name`, looked for at `near` (an
 * item's own position) first and then ever farther from it on both sides, so
 * items a listener shifted by a few places are found after a few steps.
 */
export function sourceIndex(table: SourceTable<{ readonly name: string }>, name: string, near = -1): number | undefined {
  const { list } = table
  const from = near < 0 ? 0 : near
  if (list[from]?.name === name) return from
  for (let d = 1; from - d >= 0 || from + d < list.length; d++) {
    if (list[from + d]?.name === name) return from + d
    if (list[from - d]?.name === name) return from - d
  }
  return undefined
}

/** The source named `name` in `table`, looked for at `near` first. */
export function sourceNamed<S extends { readonly name: string }>(table: SourceTable<S>, name: string, near = -1): S | undefined {
  const index = sourceIndex(table, name, near)
  return index === undefined ? undefined : table.list[index]
}

// Plans are immutable and shared by every assembly made from them, so each
// plan's table is made once, keyed by the plan's entries array.
const tables = new WeakMap<object, SourceTable<{ readonly name: string }>>()

/** The sources of a section plan, made once per plan. */
export function sectionSourcesOf(plan: SectionPlan): SourceTable<SectionSource> {
  let table = tables.get(plan.entries) as SourceTable<SectionSource> | undefined
  if (table === undefined) tables.set(plan.entries, (table = tableOf(plan.sources)))
  return table
}

/** The sources of a context or variable plan, made once per plan. */
export function namedSourcesOf(entries: readonly (ContextEntry | VariableEntry)[]): SourceTable<NamedSource> {
  let table = tables.get(entries) as SourceTable<NamedSource> | undefined
  if (table === undefined) tables.set(entries, (table = tableOf(entries.map((entry) => entry.source))))
  return table
}
