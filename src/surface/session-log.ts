import { scopeLabel } from '../scope/scope-key.js'
import type { BudgetWarning } from './budget.js'
import type { StabilityWarning } from './stability-lint.js'
import type { StepResult, StepWarning, SurfaceEvent, UsageRecord } from './step-surface.js'
import type { ToolSchema } from '../assembly/types.js'

/**
 * The JSONL session log: one JSON object per line. Each step is a `step`
 * record followed by that step's surface events, in order:
 *
 *   {"type":"step","step":1,"compacted":false,"stablePrefixLength":0,…}
 *   {"type":"system/message","op":"append","node":0,"text":"You are …"}
 *   {"type":"request/header","config":{…},"tools":[…],"reason":"initial"}
 *   {"type":"step","step":2,…}
 *
 * The step record comes first so a reader applies the step's compaction
 * before its events. A `usage` record (`writeUsage`) follows its step's
 * events: {"type":"usage","step":1,"inputTokens":…,"cachedInputTokens":…}.
 */
export interface SessionLogStepRecord {
  /** The record kind. */
  readonly type: 'step'
  /** `StepResult.step`. */
  readonly step: number
  /** `StepResult.compacted`. */
  readonly compacted: boolean
  /** `StepResult.stablePrefixLength`. */
  readonly stablePrefixLength: number
  /** `StepResult.stablePrefixBytes`. */
  readonly stablePrefixBytes: number
  /** `StepResult.changedSections`. */
  readonly changedSections: readonly string[]
  /** `StepResult.firstChangedSection`. */
  readonly firstChangedSection?: string
  /** `StepResult.warnings`, with layers as labels. */
  readonly warnings: readonly SessionLogWarning[]
  /** `StepResult.toolsChanged` (absent in logs written before it existed). */
  readonly toolsChanged?: boolean
  /** `StepResult.configChanged`. */
  readonly configChanged?: boolean
  /** `StepResult.reusablePrefixLength`. */
  readonly reusablePrefixLength?: number
  /** `StepResult.reusablePrefixBytes`. */
  readonly reusablePrefixBytes?: number
  /** `StepResult.stablePrefixTokens` (only with `countTokens`). */
  readonly stablePrefixTokens?: number
  /** `StepResult.reusablePrefixTokens` (only with `countTokens`). */
  readonly reusablePrefixTokens?: number
  /** `StepResult.promptTokens` (only with `countTokens`). */
  readonly promptTokens?: number
  /** The sent section names in prompt order (so a reader tells added, removed and changed apart); absent when unknown. */
  readonly sections?: readonly string[]
  /** `StepResult.withheld`: the sections the budget withheld from this step's prompt (only with a budget). */
  readonly withheld?: readonly string[]
  /** `StepResult.overBudget` (only with a budget). */
  readonly overBudget?: boolean
}

/** A step warning as logged: a stability finding with its layer as a label, or a budget finding as it is. */
export type SessionLogWarning = SessionLogStabilityWarning | BudgetWarning

/** A `StabilityWarning` as logged: the layer becomes `'global'` or the scope's label. */
export interface SessionLogStabilityWarning {
  /** `StabilityWarning.kind`. */
  readonly kind: StabilityWarning['kind']
  /** `StabilityWarning.section`. */
  readonly section: string
  /** `'global'` or the supplying scope's label; absent when unknown. */
  readonly layer?: string
  /** `StabilityWarning.variable`. */
  readonly variable?: string
  /** `StabilityWarning.message`. */
  readonly message: string
}

/** One line of the session log. */
export type SessionLogRecord = SessionLogStepRecord | SurfaceEvent | UsageRecord

/**
 * The JSONL lines of one step, each ending in `\n`: the step record, then
 * the step's events in order (what `promptloom/node`'s `SessionLogWriter`
 * appends per step; pure, so any runtime can ship them elsewhere).
 */
export function serializeStep(result: StepResult): string {
  const record: SessionLogStepRecord = {
    type: 'step',
    step: result.step,
    compacted: result.compacted,
    stablePrefixLength: result.stablePrefixLength,
    stablePrefixBytes: result.stablePrefixBytes,
    changedSections: result.changedSections,
    ...(result.firstChangedSection === undefined ? {} : { firstChangedSection: result.firstChangedSection }),
    warnings: result.warnings.map(loggedWarning),
    toolsChanged: result.toolsChanged,
    configChanged: result.configChanged,
    reusablePrefixLength: result.reusablePrefixLength,
    reusablePrefixBytes: result.reusablePrefixBytes,
    ...tokenFields(result),
    sections: result.rendered.parts.map((part) => part.name),
    ...(result.withheld === undefined ? {} : { withheld: result.withheld, overBudget: result.overBudget === true }),
  }
  let out = JSON.stringify(record) + '\n'
  for (const event of result.events) out += JSON.stringify(event) + '\n'
  return out
}

/** The line `writeUsage` appends for `record`, ending in `\n`. Throws a `TypeError` for a record that is not a usage record. */
export function serializeUsage(record: UsageRecord): string {
  if (typeof record !== 'object' || record === null || record.type !== 'usage' || !Number.isSafeInteger(record.step)) {
    throw new TypeError('writeUsage expects the record surface.observeUsage() returned ({ type: "usage", step, … })')
  }
  return JSON.stringify(record) + '\n'
}

function tokenFields(result: StepResult): Pick<SessionLogStepRecord, 'stablePrefixTokens' | 'reusablePrefixTokens' | 'promptTokens'> {
  const out: { stablePrefixTokens?: number; reusablePrefixTokens?: number; promptTokens?: number } = {}
  if (result.stablePrefixTokens !== undefined) out.stablePrefixTokens = result.stablePrefixTokens
  if (result.reusablePrefixTokens !== undefined) out.reusablePrefixTokens = result.reusablePrefixTokens
  if (result.promptTokens !== undefined) out.promptTokens = result.promptTokens
  return out
}

function loggedWarning(warning: StepWarning): SessionLogWarning {
  if (!('section' in warning)) return warning
  const { layer, ...rest } = warning
  if (layer === undefined) return rest
  return { ...rest, layer: layer === 'global' ? 'global' : scopeLabel(layer) }
}

/** The step record's figures as replayed: the same fields, with the reusable figures and flags always present. */
type ReplayedFigures = Omit<SessionLogStepRecord, 'type' | 'sections' | 'toolsChanged' | 'configChanged' | 'reusablePrefixLength' | 'reusablePrefixBytes'> &
  Required<Pick<SessionLogStepRecord, 'toolsChanged' | 'configChanged' | 'reusablePrefixLength' | 'reusablePrefixBytes'>>

/**
 * What the model saw at one step, replayed from the log: the step record's
 * figures (in logs written before `toolsChanged`/`configChanged` and the
 * reusable figures existed: `false` and the stable figures), plus what the
 * model held.
 */
export interface ReplayedStep extends ReplayedFigures {
  /**
   * The system prompt the model holds: the text of the latest
   * `system/message` operation (after a compaction, node 0's text).
   */
  readonly prompt: string
  /** Every live system message, by ascending node (node 0, then in-history appends). */
  readonly systemMessages: readonly {
    /** The surface node. */
    readonly node: number
    /** The message text. */
    readonly text: string
  }[]
  /** From the latest `request/header` (`[]` before any). */
  readonly tools: readonly ToolSchema[]
  /** From the latest `request/header` (`{}` before any). */
  readonly config: Readonly<Record<string, unknown>>
  /** The latest runtime-context snapshot still in the history (`''` when none, or compacted away). */
  readonly contextSnapshot: string
  /** This step's events, in log order. */
  readonly events: readonly SurfaceEvent[]
  /** The `usage` record logged for this step (the last one, if several were written). */
  readonly usage?: UsageRecord
}

/**
 * Replays JSONL session-log text into one `ReplayedStep` per step record:
 * `append`/`replace` operations set their node's text, a `request/header`
 * replaces tools and config, a `context/snapshot` replaces the snapshot, and
 * a compacted step first drops in-history system messages (node > 0) and
 * the snapshot. A `usage` record is attached to the step of its `step`
 * number. Throws an `Error` naming the line for malformed input.
 */
export function parseSessionLog(text: string, source = 'session log'): ReplayedStep[] {
  const steps: ReplayedStep[] = []
  const nodes = new Map<number, string>()
  let prompt = ''
  let tools: readonly ToolSchema[] = []
  let config: Readonly<Record<string, unknown>> = {}
  let contextSnapshot = ''
  let current: { record: SessionLogStepRecord; events: SurfaceEvent[] } | undefined
  const usages = new Map<number, UsageRecord>()
  const seen = new Set<number>()

  const finish = (): void => {
    if (current === undefined) return
    const { record, events } = current
    steps.push({
      step: record.step,
      compacted: record.compacted,
      prompt,
      systemMessages: [...nodes].sort(([a], [b]) => a - b).map(([node, text]) => ({ node, text })),
      tools,
      config,
      contextSnapshot,
      events,
      stablePrefixLength: record.stablePrefixLength,
      stablePrefixBytes: record.stablePrefixBytes,
      changedSections: record.changedSections,
      ...(record.firstChangedSection === undefined ? {} : { firstChangedSection: record.firstChangedSection }),
      warnings: record.warnings,
      toolsChanged: record.toolsChanged ?? false,
      configChanged: record.configChanged ?? false,
      reusablePrefixLength: record.reusablePrefixLength ?? record.stablePrefixLength,
      reusablePrefixBytes: record.reusablePrefixBytes ?? record.stablePrefixBytes,
      ...(record.stablePrefixTokens === undefined ? {} : { stablePrefixTokens: record.stablePrefixTokens }),
      ...(record.reusablePrefixTokens === undefined ? {} : { reusablePrefixTokens: record.reusablePrefixTokens }),
      ...(record.promptTokens === undefined ? {} : { promptTokens: record.promptTokens }),
      ...(record.withheld === undefined ? {} : { withheld: record.withheld, overBudget: record.overBudget === true }),
    })
  }

  const lines = text.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (line === '') continue
    const where = `${source} line ${index + 1}`
    const record = parseRecord(line, where)
    if (record.type === 'step') {
      finish()
      seen.add(record.step)
      current = { record, events: [] }
      if (record.compacted) {
        for (const node of [...nodes.keys()]) if (node > 0) nodes.delete(node)
        prompt = nodes.get(0) ?? ''
        contextSnapshot = ''
      }
      continue
    }
    if (current === undefined) throw new Error(`${where}: "${record.type}" comes before the first step record; a log starts with {"type":"step",…}`)
    if (record.type === 'usage') {
      if (!seen.has(record.step)) {
        throw new Error(`${where}: usage for step ${record.step} has no step record before it; write the step, then its usage`)
      }
      usages.set(record.step, record)
      continue
    }
    current.events.push(record)
    switch (record.type) {
      case 'system/message':
        nodes.set(record.node, record.text)
        prompt = record.text
        break
      case 'request/header':
        tools = record.tools
        config = record.config
        break
      case 'context/snapshot':
        contextSnapshot = record.text
        break
    }
  }
  finish()
  if (usages.size === 0) return steps
  return steps.map((step) => {
    const usage = usages.get(step.step)
    return usage === undefined ? step : { ...step, usage }
  })
}

function parseRecord(line: string, where: string): SessionLogRecord {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    throw new Error(`${where} is not JSON (${String(error)}); each line holds one JSON object`)
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  const bad = (what: string): Error => new Error(`${where}: ${what}`)
  switch (record.type) {
    case 'step':
      if (typeof record.step !== 'number' || typeof record.compacted !== 'boolean' || !Array.isArray(record.changedSections)) {
        throw bad('a step record needs a numeric "step", a boolean "compacted" and a "changedSections" array')
      }
      return { warnings: [], ...record } as unknown as SessionLogStepRecord
    case 'system/message':
      if (
        (record.op !== 'append' && record.op !== 'replace') ||
        !Number.isSafeInteger(record.node) ||
        (record.node as number) < 0 ||
        typeof record.text !== 'string'
      ) {
        throw bad('a "system/message" record needs op "append" or "replace", a non-negative integer "node" and a string "text"')
      }
      return record as unknown as SurfaceEvent
    case 'request/header':
      if (!Array.isArray(record.tools) || typeof record.config !== 'object' || record.config === null || typeof record.reason !== 'string') {
        throw bad('a "request/header" record needs a "tools" array, a "config" object and a string "reason"')
      }
      return record as unknown as SurfaceEvent
    case 'context/snapshot':
      if (typeof record.text !== 'string' || !Array.isArray(record.sections)) {
        throw bad('a "context/snapshot" record needs a string "text" and a "sections" array')
      }
      return record as unknown as SurfaceEvent
    case 'usage':
      if (
        !Number.isSafeInteger(record.step) ||
        !isTokenCount(record.inputTokens) ||
        !isTokenCount(record.cachedInputTokens) ||
        (record.cacheWriteTokens !== undefined && !isTokenCount(record.cacheWriteTokens)) ||
        (record.predictedTokens !== undefined && !isTokenCount(record.predictedTokens))
      ) {
        throw bad('a "usage" record needs an integer "step" and non-negative numbers "inputTokens" and "cachedInputTokens"')
      }
      return record as unknown as UsageRecord
    default:
      throw bad(
        `unknown record type ${JSON.stringify(record.type)}; known types: step, system/message, request/header, context/snapshot, usage`,
      )
  }
}

function isTokenCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}
