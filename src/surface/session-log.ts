import { scopeLabel } from '../scope/scope-key.js'
import type { BudgetWarning } from './budget.js'
import type { LayerRef } from '../assembly/entries.js'
import type { CacheBreak } from './cache-break.js'
import type { StabilityWarning } from './stability-lint.js'
import type { StepResult } from './step-result.js'
import type { SurfaceEvent } from './surface-events.js'
import type { UsageRecord } from './usage-record.js'

/**
 * The JSONL session log: one JSON object per line. Each step is a `step`
 * record, then that step's surface events in order, then any `usage` record:
 *
 *   {"type":"step","step":1,"compacted":false,"stablePrefixLength":0,…}
 *   {"type":"system/message","op":"append","node":0,"text":"You are …"}
 *   {"type":"request/header","config":{…},"tools":[…],"reason":"initial"}
 *   {"type":"step","step":2,…}
 *
 * The step record comes first so a reader applies its compaction before its
 * events. A step number at or below the previous one starts the next
 * surface's session in the same file. A field named like a `StepResult`
 * field holds that field (layers as labels); an optional one is absent when
 * the result lacks it or the log predates it.
 */
export interface SessionLogStepRecord extends Pick<StepResult, 'withheld' | 'overBudget' | 'expectedCachedTokens' | 'cacheNote'> {
  readonly type: 'step'
  readonly step: number
  readonly compacted: boolean
  readonly stablePrefixLength: number
  readonly stablePrefixBytes: number
  readonly changedSections: readonly string[]
  readonly firstChangedSection?: string
  readonly warnings: readonly SessionLogWarning[]
  readonly toolsChanged?: boolean
  readonly configChanged?: boolean
  readonly reusablePrefixLength?: number
  readonly reusablePrefixBytes?: number
  readonly stablePrefixTokens?: number
  readonly reusablePrefixTokens?: number
  readonly promptTokens?: number
  /** The sent section names in prompt order (so a reader tells added, removed and changed apart); absent when unknown. */
  readonly sections?: readonly string[]
  /** The UTF-16 length of each sent part, parallel to `sections`: cut from the step's prompt, they give every part's text. */
  readonly sectionLengths?: readonly number[]
  /** The supplying layer of each sent part, parallel to `sections`: `'global'`, the scope's label, or `null` when unknown. */
  readonly sectionLayers?: readonly (string | null)[]
  /** `StepResult.partTokens`, parallel to `sections` (only with a budget that gives the token figures). */
  readonly sectionTokens?: readonly number[]
  readonly cacheBreak?: SessionLogCacheBreak
}

/** A `CacheBreak` as logged: the layer becomes `'global'` or the scope's label. */
export type SessionLogCacheBreak = Omit<CacheBreak, 'layer'> & {
  /** `'global'` or the supplying scope's label; absent when unknown. */
  readonly layer?: string
}

/** A step warning as logged: a stability finding with its layer as a label, or a budget finding as it is. */
export type SessionLogWarning = SessionLogStabilityWarning | BudgetWarning

/** A `StabilityWarning` as logged: the layer becomes `'global'` or the scope's label. */
export interface SessionLogStabilityWarning {
  readonly kind: StabilityWarning['kind']
  readonly section: string
  /** `'global'` or the supplying scope's label; absent when unknown. */
  readonly layer?: string
  readonly variable?: string
  readonly message: string
}

/** One line of the session log. */
export type SessionLogRecord = SessionLogStepRecord | SurfaceEvent | UsageRecord

/**
 * The JSONL lines of one step, each ending in `\n`: the step record, then the
 * step's events in order (what `promptloom/node`'s `SessionLogWriter` appends;
 * pure, so any runtime can ship them elsewhere).
 */
export function serializeStep(result: StepResult): string {
  // JSON.stringify leaves out the fields a result lacks (undefined).
  const record: SessionLogStepRecord = {
    type: 'step',
    step: result.step,
    compacted: result.compacted,
    stablePrefixLength: result.stablePrefixLength,
    stablePrefixBytes: result.stablePrefixBytes,
    changedSections: result.changedSections,
    firstChangedSection: result.firstChangedSection,
    warnings: result.warnings.map((warning) => ('section' in warning ? withLayerLabel(warning) : warning)),
    toolsChanged: result.toolsChanged,
    configChanged: result.configChanged,
    reusablePrefixLength: result.reusablePrefixLength,
    reusablePrefixBytes: result.reusablePrefixBytes,
    stablePrefixTokens: result.stablePrefixTokens,
    reusablePrefixTokens: result.reusablePrefixTokens,
    promptTokens: result.promptTokens,
    sections: result.rendered.parts.map((part) => part.name),
    sectionLengths: result.rendered.parts.map((part) => part.text.length),
    sectionLayers: result.rendered.parts.map((part) => (part.layer === undefined ? null : layerLabel(part.layer))),
    sectionTokens: result.partTokens,
    withheld: result.withheld,
    overBudget: result.withheld === undefined ? undefined : result.overBudget === true,
    expectedCachedTokens: result.expectedCachedTokens,
    cacheNote: result.cacheNote,
    cacheBreak: result.cacheBreak === undefined ? undefined : withLayerLabel(result.cacheBreak),
  }
  return [record, ...result.events].map((line) => JSON.stringify(line) + '\n').join('')
}

/** The line `writeUsage` appends for `record`, ending in `\n`. Throws a `TypeError` for a record that is not a usage record. */
export function serializeUsage(record: UsageRecord): string {
  if (typeof record !== 'object' || record === null || record.type !== 'usage' || !Number.isSafeInteger(record.step)) {
    throw new TypeError('writeUsage expects the record surface.observeUsage() returned ({ type: "usage", step, … })')
  }
  return JSON.stringify(record) + '\n'
}

/** A layer as the log (and telemetry) shows it: `'global'`, or the scope key's label. */
export function layerLabel(layer: LayerRef): string {
  return layer === 'global' ? 'global' : scopeLabel(layer)
}

function withLayerLabel<T extends { readonly layer?: LayerRef }>(value: T): Omit<T, 'layer'> & { readonly layer?: string } {
  const { layer, ...rest } = value
  return layer === undefined ? rest : { ...rest, layer: layerLabel(layer) }
}
