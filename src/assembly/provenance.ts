/**
 * Where an assembly came from, as data: for each section, context and variable of its plans, the
 * supplying layer and the declared options, plus the texts collected before the waterfall. Rendering
 * reads it to label parts and errors; nothing here is a live view, a signal or a counter.
 */

import type { ScopeKey } from '../scope/scope-key.js'
import type { LayerRef } from './entries.js'
import type { StabilityGuard } from './config.js'
import type { PromptSection, PromptStats, Stability } from './types.js'

/** A registered runtime context or variable as it supplied an assembly (`stability`: `undefined` when none was declared). */
export interface NamedSource {
  readonly name: string
  readonly layer: LayerRef
  readonly stability: Stability | undefined
}

/** A registered section as it supplied an assembly, every declared option defaulted but `stability`. */
export interface SectionSource
  extends NamedSource,
    Required<Pick<PromptSection, 'order' | 'interpolate' | 'complete' | 'required' | 'cacheBreakpoint' | 'priority'>> {}

/** Sources in plan order (names are unique; no name index, since an item is almost always at its own position). */
export type SourceTable<S extends { readonly name: string }> = { readonly list: readonly S[] }

/** The provenance of one `prepare()` or `assemble()` result. */
export interface AssemblyProvenance {
  /** `undefined` for the global view. */
  readonly scope: ScopeKey | undefined
  /** Absent on a preparation. */
  readonly sections?: SourceTable<SectionSource>
  /** Each section's text as collected before the `system-prompt/assemble` waterfall, by `sections.list` index. */
  readonly collected?: readonly string[]
  readonly contexts: SourceTable<NamedSource>
  readonly variables: SourceTable<NamedSource>
  /** The required sections restored after the waterfall (a listener dropped, edited or moved them), in prompt order. */
  readonly restored?: readonly string[]
  /** Config `stabilityGuard` of the service that assembled it; the render enforces `'error'`. Absent: `'warn'`. */
  readonly stabilityGuard?: StabilityGuard
}

/** The per-scope handle under which the render layer keeps its memos (weakly): a released scope's memos go with it. */
export interface RenderSlot {
  readonly stats: PromptStats
}

export interface AssemblyRecord {
  readonly provenance: AssemblyProvenance
  readonly slot: RenderSlot
}

/**
 * The one place a result's record lives: keyed by the exact object `prepare()`, `assemble()` or
 * `refreshContext()` returned, so the result stays a plain object. A copy has no record: it renders
 * from scratch, without layers, never with another assembly's labels.
 */
const records = new WeakMap<object, AssemblyRecord>()

/** Ties `record` to `target` (the only writer of `records`) and returns `target`. */
export function withRecord<T extends object>(target: T, record: AssemblyRecord): T {
  records.set(target, record)
  return target
}

/** The record of a result made by `prepare`/`assemble`/`refreshContext`; `undefined` for anything else (a copy, say). */
export function recordOf(target: object): AssemblyRecord | undefined {
  return records.get(target)
}

/** The scope of an engine-made `contexts` array, which a spread of its result shares: `refreshContext` refuses another scope. */
const scopes = new WeakMap<object, { readonly scope: ScopeKey | undefined }>()

/** Ties `contexts` to its result's scope if the engine made it: it is `made`, or not a listener's (maybe shared) `returned`. */
export function recordScope(contexts: object, scope: ScopeKey | undefined, made = contexts, returned?: object): void {
  if (contexts === made || contexts !== returned) scopes.set(contexts, { scope })
}

/** The scope `result` was assembled for (`undefined`: the global view), when it (or the `contexts` array it shares) is known. */
export function assembledFor(result: { readonly contexts: object }): { readonly scope: ScopeKey | undefined } | undefined {
  const record = recordOf(result)
  return record === undefined ? scopes.get(result.contexts) : { scope: record.provenance.scope }
}

/** The index in `table` of the source named `name`, looked for at `near` first. */
export function sourceIndex(table: SourceTable<{ readonly name: string }>, name: string, near = -1): number | undefined {
  const { list } = table
  if (list[near]?.name === name) return near
  for (let i = 0; i < list.length; i++) if (list[i]!.name === name) return i
  return undefined
}

/** The source named `name` in `table`, looked for at `near` first. */
export function sourceNamed<S extends { readonly name: string }>(table: SourceTable<S>, name: string, near = -1): S | undefined {
  const index = sourceIndex(table, name, near)
  return index === undefined ? undefined : table.list[index]
}
