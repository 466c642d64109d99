/**
 * Replaying a JSONL session log, one line at a time: the one parser behind
 * `parseSessionLog`, `promptloom/node`'s `readSessionLog` and the CLI. Each
 * line costs time proportional to its own length, whatever came before it:
 * a step keeps what the model held as shared, immutable values rather than
 * copies.
 */

import type { ToolSchema } from '../assembly/types.js'
import { holdMessages, withMessage, type Held, type HistoryMessage } from './replayed-messages.js'
import { readRecord, RecordRuleError } from './session-log-fields.js'
import { TornLines } from './torn-lines.js'
import type { SessionLogStepRecord } from './session-log.js'
import type { SurfaceEvent } from './surface-events.js'
import type { UsageRecord } from './usage-record.js'

/** Step-record fields that logs written before them lack; replay fills them in. */
type Defaulted = 'toolsChanged' | 'configChanged' | 'reusablePrefixLength' | 'reusablePrefixBytes'

/** The step record's fields as replayed: the same fields, with the defaulted ones always present. */
type ReplayedFigures = Omit<SessionLogStepRecord, 'type' | Defaulted> & Required<Pick<SessionLogStepRecord, Defaulted>>

/**
 * What the model saw at one step, replayed from the log: the step record's
 * fields (in logs written before `toolsChanged`/`configChanged` and the
 * reusable figures existed: `false` and the stable figures), plus what the
 * model held after the step's events.
 */
export interface ReplayedStep extends ReplayedFigures {
  /**
   * Which surface wrote the step: 1 for the log's first, plus one at every
   * step record whose number is not above the previous one (a new surface
   * appending to the same file), where replay starts from nothing again.
   */
  readonly session: number
  /** The system prompt the model holds: the text of the latest `system/message` (after a compaction, node 0's text). */
  readonly prompt: string
  /** Every live system message, by ascending node (node 0, then in-history appends); built when first read. */
  readonly systemMessages: readonly {
    readonly node: number
    readonly text: string
  }[]
  /** From the latest `request/header` of the session (`[]` before any). */
  readonly tools: readonly ToolSchema[]
  /** From the latest `request/header` of the session (`{}` before any). */
  readonly config: Readonly<Record<string, unknown>>
  /** The latest runtime-context snapshot still in the history (`''` when none, or compacted away). */
  readonly contextSnapshot: string
  /** This step's events, in log order. */
  readonly events: readonly SurfaceEvent[]
  /** The `usage` record logged for this step (the last one, if several were written). */
  readonly usage?: UsageRecord
}

/** Something the reader skipped and kept going: a torn line. */
export interface SessionLogReadWarning {
  readonly kind: 'torn-line'
  /** The file read, when the reader was given one. */
  readonly source?: string
  /** The 1-based line skipped. */
  readonly line: number
  /** What was skipped and why, naming the file and line. */
  readonly message: string
}

/** A replayed session log. */
export interface SessionLogReplay {
  /** One entry per step record, in log order. */
  readonly steps: ReplayedStep[]
  /** The lines the reader skipped (at most one torn line). */
  readonly warnings: SessionLogReadWarning[]
}

/** A session log that cannot be replayed; `message` names the file (when known) and the line. */
export class SessionLogError extends Error {
  override readonly name = 'SessionLogError'
  /** The file read, when the reader was given one. */
  readonly source: string | undefined
  /** The 1-based line at fault, when one is. */
  readonly line: number | undefined

  constructor(source: string | undefined, line: number | undefined, rule: string) {
    super(`${logLabel(source)}${line === undefined ? '' : ` line ${line}`}: ${rule}`)
    this.source = source
    this.line = line
  }
}

/** `session log "logs/a.jsonl"`, or `session log` for text of unknown origin. */
export function logLabel(source: string | undefined): string {
  return source === undefined ? 'session log' : `session log "${source}"`
}

interface OpenStep {
  readonly record: SessionLogStepRecord
  readonly events: SurfaceEvent[]
  usage: UsageRecord | undefined
}

const NO_TOOLS: readonly ToolSchema[] = Object.freeze([])
const NO_CONFIG: Readonly<Record<string, unknown>> = Object.freeze({})
const BLANK = /^[ \t\r]*$/

/**
 * Replays a session log fed one line at a time (`line`, without its line
 * break), then `end()`. Throws a `SessionLogError` naming the line for a
 * malformed record. A UTF-8 BOM before the first line, a `\r` before a line
 * break and blank lines are accepted.
 */
export class SessionLogReplayer {
  readonly #source: string | undefined
  readonly #steps: ReplayedStep[] = []
  #lineNumber = 0
  // What the model holds.
  #node0: string | undefined
  #history: HistoryMessage | undefined
  #prompt = ''
  #tools = NO_TOOLS
  #config = NO_CONFIG
  #snapshot = ''
  /** The messages the previous replayed step holds, shared by the next while unchanged. */
  #held: Held | undefined
  // The step whose events are being read, and the session it belongs to.
  #open: OpenStep | undefined
  #session = 0
  #sessionStart = 0
  #lastStep: number | undefined
  /** Step number → index in `#steps` (the open step's index is `#steps.length`), for the current session. */
  readonly #indexOf = new Map<number, number>()
  readonly #torn: TornLines

  constructor(source?: string) {
    this.#source = source
    this.#torn = new TornLines(logLabel(source), (line, rule) => this.#error(line, rule))
  }

  /** Reads the next line of the log. */
  line(text: string): void {
    const number = ++this.#lineNumber
    let raw = number === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    if (raw.endsWith('\r')) raw = raw.slice(0, -1)
    if (BLANK.test(raw)) return
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      const glued = this.#torn.notJson(raw, number, error instanceof Error ? error.message : String(error))
      if (glued !== undefined) this.#apply(glued, number)
      return
    }
    this.#torn.parsed(value)
    this.#apply(value, number)
  }

  /** Ends the log: a line still waiting is a torn last line. Returns the replay. */
  end(): SessionLogReplay {
    this.#torn.end()
    this.#finish()
    const warnings = this.#torn.skipped.map(({ line, message }) => ({ kind: 'torn-line' as const, ...(this.#source === undefined ? {} : { source: this.#source }), line, message }))
    return { steps: this.#steps, warnings }
  }

  #apply(value: unknown, number: number): void {
    let record
    try {
      record = readRecord(value)
    } catch (error) {
      if (error instanceof RecordRuleError) throw this.#error(number, error.message)
      throw error
    }
    switch (record.type) {
      case 'step':
        this.#beginStep(record, number)
        return
      case 'usage':
        this.#attachUsage(record, number)
        return
    }
    const open = this.#open
    if (open === undefined) throw this.#error(number, `"${record.type}" comes before the first step record; a log starts with {"type":"step",…}`)
    open.events.push(record)
    switch (record.type) {
      case 'system/message':
        if (record.node === 0) this.#node0 = record.text
        else this.#history = withMessage(this.#history, record.node, record.text)
        this.#prompt = record.text
        return
      case 'request/header':
        this.#tools = record.tools
        this.#config = record.config
        return
      case 'context/snapshot':
        this.#snapshot = record.text
        return
    }
  }

  #beginStep(record: SessionLogStepRecord, number: number): void {
    this.#finish()
    if (this.#lastStep === undefined || record.step <= this.#lastStep) {
      // A new surface: nothing the previous one sent is part of its conversation.
      this.#session++
      this.#sessionStart = number
      this.#indexOf.clear()
      this.#node0 = undefined
      this.#history = undefined
      this.#prompt = ''
      this.#tools = NO_TOOLS
      this.#config = NO_CONFIG
      this.#snapshot = ''
    }
    this.#lastStep = record.step
    if (record.compacted) {
      this.#history = undefined
      this.#prompt = this.#node0 ?? ''
      this.#snapshot = ''
    }
    this.#indexOf.set(record.step, this.#steps.length)
    this.#open = { record, events: [], usage: undefined }
  }

  #attachUsage(record: UsageRecord, number: number): void {
    const index = this.#indexOf.get(record.step)
    if (index === undefined) {
      const since = this.#session > 1 ? ` in the session that starts at line ${this.#sessionStart} (a step number at or below the previous one starts a new session)` : ''
      throw this.#error(number, `usage for step ${record.step} has no step record before it${since}; write the step, then its usage`)
    }
    if (index === this.#steps.length) this.#open!.usage = record
    else (this.#steps[index] as { usage?: UsageRecord }).usage = record
  }

  #finish(): void {
    const open = this.#open
    if (open === undefined) return
    this.#open = undefined
    const record = open.record
    const step: Record<string | symbol, unknown> = {}
    for (const key in record) if (key !== 'type') step[key] = record[key as keyof SessionLogStepRecord]
    step.toolsChanged ??= false
    step.configChanged ??= false
    step.reusablePrefixLength ??= record.stablePrefixLength
    step.reusablePrefixBytes ??= record.stablePrefixBytes
    step.session = this.#session
    step.prompt = this.#prompt
    step.tools = this.#tools
    step.config = this.#config
    step.contextSnapshot = this.#snapshot
    step.events = open.events
    if (this.#held === undefined || this.#held.node0 !== this.#node0 || this.#held.history !== this.#history) {
      this.#held = { node0: this.#node0, history: this.#history }
    }
    holdMessages(step, this.#held)
    if (open.usage !== undefined) step.usage = open.usage
    this.#steps.push(step as unknown as ReplayedStep)
  }

  #error(line: number, rule: string): SessionLogError {
    return new SessionLogError(this.#source, line, rule)
  }
}

/**
 * Replays JSONL session-log text (see `SessionLogReplayer` for the rules):
 * `append`/`replace` operations set their node's text, a `request/header`
 * replaces tools and config, a `context/snapshot` replaces the snapshot, a
 * compacted step first drops in-history system messages (node > 0) and the
 * snapshot, and a `usage` record attaches to the latest step of its number.
 * Throws a `SessionLogError` naming `source` and the line for malformed input.
 */
export function parseSessionLog(text: string, source?: string): SessionLogReplay {
  const replayer = new SessionLogReplayer(source)
  let start = 0
  for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
    replayer.line(text.slice(start, end))
    start = end + 1
  }
  replayer.line(text.slice(start))
  return replayer.end()
}
