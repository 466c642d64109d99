import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

/**
 * The CLI's own reader of a JSONL session log (SPEC §3): every line is
 * validated from `unknown`, so a log written by an older or newer promptloom
 * reads as long as the fields it has are well-formed. Fields that are newer
 * than the base format (reusable prefix, tokens, withheld, sections, usage
 * records) are read when present and never required.
 *
 *   {"type":"step",…}            one per step, first
 *   {"type":"system/message",…}  that step's surface events
 *   {"type":"request/header",…}
 *   {"type":"context/snapshot",…}
 *   {"type":"usage","step":N,…}  what the provider reported, after the step
 */

/** A malformed or unreadable log: the message names the file and, for a bad line, its number. */
export class LogError extends Error {
  override readonly name = 'LogError'
}

/** A step warning as logged: a cache-stability or a token-budget finding. */
export interface LoggedWarning {
  readonly kind: string
  readonly message: string
  readonly section?: string
  readonly layer?: string
  readonly variable?: string
  /** A budget warning's sections (withheld, restored, or withheld while over budget). */
  readonly sections?: readonly string[]
}

/** A tool declaration from a `request/header` record: its name and its JSON, to compare steps. */
export interface LoggedTool {
  readonly name: string
  readonly json: string
}

/** A `request/header` record. */
export interface LoggedHeader {
  readonly config: Readonly<Record<string, unknown>>
  readonly tools: readonly LoggedTool[]
  readonly reason: string
}

/** A `usage` record: what the provider reported for a step. */
export interface LoggedUsage {
  readonly inputTokens: number
  readonly cachedInputTokens: number
  readonly cacheWriteTokens?: number
  readonly predictedTokens?: number
}

/** One step record with its events, replayed: what the model held after the step. */
export interface LoggedStep {
  readonly step: number
  /** The 1-based line of the step record. */
  readonly line: number
  readonly compacted: boolean
  readonly stablePrefixLength: number
  readonly stablePrefixBytes: number
  readonly changedSections: readonly string[]
  readonly firstChangedSection?: string
  readonly warnings: readonly LoggedWarning[]
  readonly reusablePrefixLength?: number
  readonly reusablePrefixBytes?: number
  readonly toolsChanged?: boolean
  readonly configChanged?: boolean
  readonly promptTokens?: number
  readonly stablePrefixTokens?: number
  readonly withheld?: readonly string[]
  readonly overBudget?: boolean
  /** The rendered section names in prompt order, when the writer logged them. */
  readonly sections?: readonly string[]
  /** The system prompt the model holds after this step (the latest `system/message` text). */
  readonly prompt: string
  /** Whether this step sent a `system/message`. */
  readonly promptSent: boolean
  /** This step's `request/header`, when it sent one. */
  readonly header?: LoggedHeader
  /** The tools declared as of this step (`[]` before any header). */
  readonly tools: readonly LoggedTool[]
  /** The config as of this step (`{}` before any header). */
  readonly config: Readonly<Record<string, unknown>>
  /** The section names of this step's `context/snapshot`, when it recorded one. */
  readonly snapshotSections?: readonly string[]
  /** The provider's usage report for this step, when a `usage` record followed it. */
  readonly usage?: LoggedUsage
}

/** One session log: one agent. */
export interface AgentLog {
  /** The agent's name: the file name without `.jsonl`. */
  readonly name: string
  /** The path it was read from. */
  readonly file: string
  /** The steps, in log order. */
  readonly steps: readonly LoggedStep[]
}

const RECORD_TYPES = 'step, system/message, request/header, context/snapshot, usage'

/** Reads the log at `file`; throws a `LogError` naming the file when it cannot be read or a line is malformed. */
export function readAgentLog(file: string): AgentLog {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new LogError(`cannot read session log "${file}" (${code ?? String(error)}); pass the path of a .jsonl file the session-log writer wrote`)
  }
  return parseAgentLog(text, file)
}

/** The agent name for a log path: `logs/session.agent-1.jsonl` → `session.agent-1`. */
export function agentNameOf(file: string): string {
  return basename(file).replace(/\.jsonl$/i, '')
}

/**
 * Parses and replays JSONL log text. Throws a `LogError` naming `file` and the
 * line for a line that is not JSON, a record of unknown type, a field of the
 * wrong type, an event before the first step, or a `usage` record for a step
 * that is not in the log; and for a log without any step record.
 */
export function parseAgentLog(text: string, file: string, name = agentNameOf(file)): AgentLog {
  const steps: LoggedStep[] = []
  const nodes = new Map<number, string>()
  let prompt = ''
  let tools: readonly LoggedTool[] = []
  let config: Readonly<Record<string, unknown>> = {}
  let open: Draft | undefined

  const close = (): void => {
    if (open !== undefined) steps.push({ ...open.base, prompt, promptSent: open.promptSent, tools, config, ...open.extra })
    open = undefined
  }

  const lines = text.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!.trim()
    if (raw === '') continue
    const line = index + 1
    const at = new Where(file, line)
    const record = parseObject(raw, at)
    switch (record.type) {
      case 'step': {
        close()
        open = { base: stepRecord(record, at, line), promptSent: false, extra: {} }
        if (open.base.compacted) {
          for (const node of [...nodes.keys()]) if (node > 0) nodes.delete(node)
          prompt = nodes.get(0) ?? ''
        }
        break
      }
      case 'system/message': {
        const draft = requireStep(open, at, record.type)
        const op = record.op
        if (op !== 'append' && op !== 'replace') throw at.error(`"op" must be "append" or "replace" (got ${shown(op)})`)
        const node = count(record, 'node', at)
        const text = string(record, 'text', at)
        nodes.set(node, text)
        prompt = text
        draft.promptSent = true
        break
      }
      case 'request/header': {
        const draft = requireStep(open, at, record.type)
        const header = headerRecord(record, at)
        tools = header.tools
        config = header.config
        draft.extra = { ...draft.extra, header }
        break
      }
      case 'context/snapshot': {
        const draft = requireStep(open, at, record.type)
        string(record, 'text', at)
        const sections = array(record, 'sections', at).map((item, i) => {
          const name = isObject(item) ? item.name : undefined
          if (typeof name !== 'string') throw at.error(`"sections[${i}]" must be an object with a string "name" (got ${shown(item)})`)
          return name
        })
        draft.extra = { ...draft.extra, snapshotSections: sections }
        break
      }
      case 'usage': {
        const step = count(record, 'step', at)
        const usage = usageRecord(record, at)
        if (open !== undefined && open.base.step === step) {
          open.extra = { ...open.extra, usage }
          break
        }
        const done = steps.findIndex((s) => s.step === step)
        if (done < 0) throw at.error(`"usage" record for step ${step}, which is not in the log before it; a usage record follows its step`)
        steps[done] = { ...steps[done]!, usage }
        break
      }
      default:
        throw at.error(`unknown record type ${shown(record.type)}; known types: ${RECORD_TYPES}`)
    }
  }
  close()
  if (steps.length === 0) {
    throw new LogError(`session log "${file}" holds no step records; a session log starts with {"type":"step",…} (is it empty?)`)
  }
  return { name, file, steps }
}

// ── records ─────────────────────────────────────────────────────────────────

type StepBase = Omit<LoggedStep, 'prompt' | 'promptSent' | 'tools' | 'config' | 'header' | 'snapshotSections' | 'usage'>

interface Draft {
  readonly base: StepBase
  promptSent: boolean
  extra: Pick<LoggedStep, 'header' | 'snapshotSections' | 'usage'>
}

function stepRecord(record: Record<string, unknown>, at: Where, line: number): StepBase {
  const step: Record<string, unknown> = {
    step: count(record, 'step', at),
    line,
    compacted: boolean(record, 'compacted', at),
    stablePrefixLength: count(record, 'stablePrefixLength', at, 0),
    stablePrefixBytes: count(record, 'stablePrefixBytes', at, 0),
    changedSections: strings(record, 'changedSections', at),
    warnings: record.warnings === undefined ? [] : array(record, 'warnings', at).map((item, i) => warningOf(item, i, at)),
  }
  for (const key of ['firstChangedSection'] as const) if (record[key] !== undefined) step[key] = string(record, key, at)
  for (const key of ['reusablePrefixLength', 'reusablePrefixBytes', 'promptTokens', 'stablePrefixTokens'] as const) {
    if (record[key] !== undefined) step[key] = count(record, key, at)
  }
  for (const key of ['toolsChanged', 'configChanged', 'overBudget'] as const) {
    if (record[key] !== undefined) step[key] = boolean(record, key, at)
  }
  for (const key of ['withheld', 'sections'] as const) if (record[key] !== undefined) step[key] = strings(record, key, at)
  return step as unknown as StepBase
}

function warningOf(item: unknown, i: number, at: Where): LoggedWarning {
  if (!isObject(item) || typeof item.message !== 'string' || typeof item.kind !== 'string') {
    throw at.error(`"warnings[${i}]" must be an object with string "kind" and "message" (got ${shown(item)})`)
  }
  const warning: Record<string, unknown> = { kind: item.kind, message: item.message }
  for (const key of ['section', 'layer', 'variable'] as const) {
    if (item[key] === undefined) continue
    if (typeof item[key] !== 'string') throw at.error(`"warnings[${i}].${key}" must be a string (got ${shown(item[key])})`)
    warning[key] = item[key]
  }
  if (item.sections !== undefined) warning.sections = strings(item, 'sections', at, `warnings[${i}].sections`)
  return warning as unknown as LoggedWarning
}

function headerRecord(record: Record<string, unknown>, at: Where): LoggedHeader {
  const config = record.config
  if (!isObject(config) || Array.isArray(config)) throw at.error(`"config" must be an object (got ${shown(config)})`)
  const tools = array(record, 'tools', at).map((tool, i) => {
    if (!isObject(tool) || typeof tool.name !== 'string') throw at.error(`"tools[${i}]" must be an object with a string "name" (got ${shown(tool)})`)
    return { name: tool.name, json: JSON.stringify(tool) }
  })
  return { config, tools, reason: string(record, 'reason', at) }
}

function usageRecord(record: Record<string, unknown>, at: Where): LoggedUsage {
  const usage: Record<string, number> = {
    inputTokens: count(record, 'inputTokens', at),
    cachedInputTokens: count(record, 'cachedInputTokens', at),
  }
  for (const key of ['cacheWriteTokens', 'predictedTokens'] as const) if (record[key] !== undefined) usage[key] = count(record, key, at)
  return usage as unknown as LoggedUsage
}

// ── field checks ────────────────────────────────────────────────────────────

class Where {
  constructor(
    readonly file: string,
    readonly line: number,
  ) {}
  error(rule: string): LogError {
    return new LogError(`session log "${this.file}" line ${this.line}: ${rule}`)
  }
}

function parseObject(raw: string, at: Where): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (error) {
    throw at.error(`not JSON (${error instanceof Error ? error.message : String(error)}); each line holds one JSON object`)
  }
  if (!isObject(value) || Array.isArray(value)) throw at.error(`expected a JSON object with a "type" (got ${shown(value)})`)
  return value
}

function requireStep(open: Draft | undefined, at: Where, type: string): Draft {
  if (open === undefined) throw at.error(`"${type}" comes before the first step record; a log starts with {"type":"step",…}`)
  return open
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

function count(record: Record<string, unknown>, key: string, at: Where, min = 0): number {
  const value = record[key]
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value
  throw at.error(`"${key}" must be a non-negative integer (got ${shown(value)})`)
}

function boolean(record: Record<string, unknown>, key: string, at: Where): boolean {
  const value = record[key]
  if (typeof value === 'boolean') return value
  throw at.error(`"${key}" must be true or false (got ${shown(value)})`)
}

function string(record: Record<string, unknown>, key: string, at: Where): string {
  const value = record[key]
  if (typeof value === 'string') return value
  throw at.error(`"${key}" must be a string (got ${shown(value)})`)
}

function array(record: Record<string, unknown>, key: string, at: Where): unknown[] {
  const value = record[key]
  if (Array.isArray(value)) return value
  throw at.error(`"${key}" must be an array (got ${shown(value)})`)
}

function strings(record: Record<string, unknown>, key: string, at: Where, label = key): string[] {
  const value = record[key]
  if (!Array.isArray(value)) throw at.error(`"${label}" must be an array (got ${shown(value)})`)
  value.forEach((item, i) => {
    if (typeof item !== 'string') throw at.error(`"${label}[${i}]" must be a string (got ${shown(item)})`)
  })
  return value as string[]
}

/** A short JSON rendering of a bad value for an error message. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing'
  const json = JSON.stringify(value)
  return json.length > 60 ? `${json.slice(0, 57)}...` : json
}
