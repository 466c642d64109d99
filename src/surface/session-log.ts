import { scopeLabel } from '../scope/scope-key.js'
import { render } from '../render/render.js'
import type { StabilityWarning } from './stability-lint.js'
import type { StepResult, SurfaceEvent } from './step-surface.js'
import type { PromptPresentation, ToolSchema } from '../assembly/types.js'

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
 * before its events.
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
  /** The rendered section names in prompt order (so a reader tells added, removed and changed apart); absent when unknown. */
  readonly sections?: readonly string[]
}

/** A `StabilityWarning` as logged: the layer becomes `'global'` or the scope's label. */
export interface SessionLogWarning {
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
export type SessionLogRecord = SessionLogStepRecord | SurfaceEvent

/**
 * The JSONL lines of one step, each ending in `\n`: the step record, then
 * the step's events in order (what `promptloom/node`'s `SessionLogWriter`
 * appends per step; pure, so any runtime can ship them elsewhere).
 */
export function serializeStep(result: StepResult, assembly?: Pick<PromptPresentation, 'sections' | 'variables'>): string {
  const sections = sectionNamesOf(result, assembly)
  const record: SessionLogStepRecord = {
    type: 'step',
    step: result.step,
    compacted: result.compacted,
    stablePrefixLength: result.stablePrefixLength,
    stablePrefixBytes: result.stablePrefixBytes,
    changedSections: result.changedSections,
    ...(result.firstChangedSection === undefined ? {} : { firstChangedSection: result.firstChangedSection }),
    warnings: result.warnings.map(loggedWarning),
    ...(sections === undefined ? {} : { sections }),
  }
  let out = JSON.stringify(record) + '\n'
  for (const event of result.events) out += JSON.stringify(event) + '\n'
  return out
}

function sectionNamesOf(result: StepResult, assembly: Pick<PromptPresentation, 'sections' | 'variables'> | undefined): string[] | undefined {
  const rendered = (result as { readonly rendered?: { readonly parts?: readonly { readonly name: string }[] } }).rendered
  if (rendered?.parts !== undefined) return rendered.parts.map((part) => part.name)
  if (assembly === undefined) return undefined
  return render(assembly).parts.map((part) => part.name)
}

function loggedWarning(warning: StabilityWarning): SessionLogWarning {
  const { layer, ...rest } = warning
  if (layer === undefined) return rest
  return { ...rest, layer: layer === 'global' ? 'global' : scopeLabel(layer) }
}

/** What the model saw at one step, replayed from the log. */
export interface ReplayedStep {
  /** The step number from the step record. */
  readonly step: number
  /** Whether compaction preceded this step. */
  readonly compacted: boolean
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
  /** From the step record. */
  readonly stablePrefixLength: number
  /** From the step record. */
  readonly stablePrefixBytes: number
  /** From the step record. */
  readonly changedSections: readonly string[]
  /** From the step record. */
  readonly firstChangedSection?: string
  /** From the step record. */
  readonly warnings: readonly SessionLogWarning[]
}

/**
 * Replays JSONL session-log text into one `ReplayedStep` per step record:
 * `append`/`replace` operations set their node's text, a `request/header`
 * replaces tools and config, a `context/snapshot` replaces the snapshot, and
 * a compacted step first drops in-history system messages (node > 0) and
 * the snapshot. Throws an `Error` naming the line for malformed input.
 */
export function parseSessionLog(text: string, source = 'session log'): ReplayedStep[] {
  const steps: ReplayedStep[] = []
  const nodes = new Map<number, string>()
  let prompt = ''
  let tools: readonly ToolSchema[] = []
  let config: Readonly<Record<string, unknown>> = {}
  let contextSnapshot = ''
  let current: { record: SessionLogStepRecord; events: SurfaceEvent[] } | undefined

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
      current = { record, events: [] }
      if (record.compacted) {
        for (const node of [...nodes.keys()]) if (node > 0) nodes.delete(node)
        prompt = nodes.get(0) ?? ''
        contextSnapshot = ''
      }
      continue
    }
    if (current === undefined) throw new Error(`${where}: "${record.type}" comes before the first step record; a log starts with {"type":"step",…}`)
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
  return steps
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
    default:
      throw bad(
        `unknown record type ${JSON.stringify(record.type)}; known types: step, system/message, request/header, context/snapshot`,
      )
  }
}
