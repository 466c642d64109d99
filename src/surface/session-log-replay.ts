/**
 * Replaying a JSONL session log, one line at a time: the one parser behind
 * `parseSessionLog`, `promptloom/node`'s `readSessionLog` and the CLI. Each
 * line costs time proportional to its own length, whatever came before it:
 * a step keeps what the model held as shared, immutable values rather than
 * copies.
 *
 * Torn lines. A process that dies in the middle of a write leaves the record
 * it was writing cut short: a line that starts like a record (`{`) but is not
 * valid JSON. The reader skips one such line per log, with a warning, when it
 * is the last line of the log, or when the record after it is a step record
 * (a writer that resumed the log starts with its surface's step). When the
 * torn line itself ends in a complete step record (a writer that resumed
 * without starting a new line appended it there), that record is kept. Any
 * other line that is not JSON, including a second torn line, is an error
 * naming the file and the line.
 */

import type { ToolSchema } from '../assembly/types.js'
import { readRecord, RecordRuleError } from './session-log-fields.js'
import type { SessionLogStepRecord } from './session-log.js'
import type { SurfaceEvent, UsageRecord } from './step-surface.js'

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
    /** The surface node. */
    readonly node: number
    /** The message text. */
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
  /** The kind of finding. */
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

/**
 * The in-history system messages (node > 0) as an immutable list, highest
 * node first. Every step keeps the version it saw in O(1): an append at a
 * higher node, the common case, shares the whole list below it.
 */
interface HistoryMessage {
  readonly node: number
  readonly text: string
  readonly below: HistoryMessage | undefined
}

function withMessage(top: HistoryMessage | undefined, node: number, text: string): HistoryMessage {
  if (top === undefined || node > top.node) return { node, text, below: top }
  if (node === top.node) return { node, text, below: top.below }
  // A write below the newest node copies only the messages above it.
  const above: HistoryMessage[] = []
  let rest: HistoryMessage | undefined = top
  while (rest !== undefined && rest.node > node) {
    above.push(rest)
    rest = rest.below
  }
  let out: HistoryMessage = { node, text, below: rest !== undefined && rest.node === node ? rest.below : rest }
  for (let i = above.length - 1; i >= 0; i--) out = { node: above[i]!.node, text: above[i]!.text, below: out }
  return out
}

function liveMessages(node0: string | undefined, history: HistoryMessage | undefined): { node: number; text: string }[] {
  const out: { node: number; text: string }[] = []
  for (let message = history; message !== undefined; message = message.below) out.push({ node: message.node, text: message.text })
  if (node0 !== undefined) out.push({ node: 0, text: node0 })
  return out.reverse()
}

/** Where a replayed step keeps the system messages it saw, until `systemMessages` is first read. */
const HELD = Symbol('system messages held')

interface Held {
  readonly node0: string | undefined
  readonly history: HistoryMessage | undefined
}

/**
 * `systemMessages` of every replayed step: built on first read, because
 * copying every live message into every step makes replay quadratic. One
 * shared getter keeps the steps' shapes alike.
 */
const LIVE_MESSAGES: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { readonly [HELD]: Held }) {
    const value = liveMessages(this[HELD].node0, this[HELD].history)
    // A frozen or sealed step keeps the getter: its properties can no longer be redefined.
    if (Object.getOwnPropertyDescriptor(this, 'systemMessages')?.configurable === true) {
      Object.defineProperty(this, 'systemMessages', { value, enumerable: true })
    }
    return value
  },
}

interface OpenStep {
  readonly record: SessionLogStepRecord
  readonly events: SurfaceEvent[]
  usage: UsageRecord | undefined
}

const NO_TOOLS: readonly ToolSchema[] = Object.freeze([])
const NO_CONFIG: Readonly<Record<string, unknown>> = Object.freeze({})
const BLANK = /^[ \t\r]*$/
const GLUED_STEP = '{"type":"step"'

/**
 * Replays a session log fed one line at a time (`line`, without its line
 * break), then `end()`. Throws a `SessionLogError` naming the line for a
 * malformed record. A UTF-8 BOM before the first line, a `\r` before a line
 * break and blank lines are accepted.
 */
export class SessionLogReplayer {
  readonly #source: string | undefined
  readonly #steps: ReplayedStep[] = []
  readonly #warnings: SessionLogReadWarning[] = []
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
  // Torn lines: the one skipped, and a line that is not JSON waiting for the record after it.
  #tornLine: number | undefined
  #suspect: { readonly line: number; readonly reason: string } | undefined

  constructor(source?: string) {
    this.#source = source
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
      this.#notJson(raw, number, error instanceof Error ? error.message : String(error))
      return
    }
    if (this.#suspect !== undefined) this.#settleSuspect((value as { type?: unknown } | null)?.type === 'step')
    this.#apply(value, number)
  }

  /** Ends the log: a line still waiting is a torn last line. Returns the replay. */
  end(): SessionLogReplay {
    if (this.#suspect !== undefined) this.#settleSuspect(true)
    this.#finish()
    return { steps: this.#steps, warnings: this.#warnings }
  }

  #notJson(raw: string, number: number, reason: string): void {
    if (this.#suspect !== undefined) this.#settleSuspect(false)
    if (!raw.startsWith('{')) throw this.#error(number, notJson(reason))
    const glued = gluedStep(raw)
    if (this.#tornLine !== undefined) {
      throw this.#error(
        number,
        `${notJson(reason)}; line ${this.#tornLine} was already skipped as a torn line and a log holds at most one (the remains of a write cut short by a crash), so the log is damaged here`,
      )
    }
    if (glued === undefined) {
      this.#suspect = { line: number, reason }
      return
    }
    this.#skipTorn(number, 'skipped the torn start of the line (a record cut short when the writing process stopped) and kept the step record a resumed writer appended to it')
    this.#apply(glued, number)
  }

  /** Decides about the line that was not JSON, now that the record after it (or the end) is known. */
  #settleSuspect(nextIsStep: boolean): void {
    const suspect = this.#suspect!
    this.#suspect = undefined
    if (!nextIsStep) {
      throw this.#error(
        suspect.line,
        `${notJson(suspect.reason)} (a line cut short by a crash is skipped only as the last line of the log or right before the step record of a writer that resumed it)`,
      )
    }
    this.#skipTorn(suspect.line, 'skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept')
  }

  #skipTorn(line: number, what: string): void {
    this.#tornLine = line
    this.#warnings.push({
      kind: 'torn-line',
      ...(this.#source === undefined ? {} : { source: this.#source }),
      line,
      message: `${logLabel(this.#source)} line ${line}: ${what}`,
    })
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
    Object.defineProperty(step, HELD, { value: this.#held })
    Object.defineProperty(step, 'systemMessages', LIVE_MESSAGES)
    if (open.usage !== undefined) step.usage = open.usage
    this.#steps.push(step as unknown as ReplayedStep)
  }

  #error(line: number, rule: string): SessionLogError {
    return new SessionLogError(this.#source, line, rule)
  }
}

function notJson(reason: string): string {
  return `not JSON (${reason}); each line holds one JSON object`
}

/** The complete step record at the end of a torn line, if one is there. */
function gluedStep(raw: string): unknown {
  for (let at = raw.indexOf(GLUED_STEP, 1); at > 0; at = raw.indexOf(GLUED_STEP, at + 1)) {
    try {
      const value: unknown = JSON.parse(raw.slice(at))
      if ((value as { type?: unknown } | null)?.type === 'step') return value
    } catch {
      // Not where the appended record starts; try the next candidate.
    }
  }
  return undefined
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
