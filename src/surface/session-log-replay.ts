/**
 * Replaying a JSONL session log one line at a time: the one parser behind `parseSessionLog`, `readSessionLog` and
 * the CLI. A line costs time linear in its own length: steps share what the model held rather than copy it.
 *
 * A crash mid-write leaves a torn line: it starts like a record (`{`) but is not JSON. Each is skipped, with a
 * warning, when it is the last line or a step record (whole or torn: a resumed writer starts with one) follows; a
 * complete step record glued to its end (a writer resumed without a line break) is kept. Other non-JSON lines are errors.
 */

import type { ToolSchema } from '../assembly/types.js'
import { readRecord, type SessionLogStepRecord } from './session-log.js'
import type { SurfaceEvent, UsageRecord } from './step-result.js'

type Defaulted = 'toolsChanged' | 'configChanged' | 'reusablePrefixLength' | 'reusablePrefixBytes'

/**
 * What the model saw at one step: the step record's fields (in logs that predate them, `toolsChanged`/`configChanged`
 * are `false` and the reusable figures the stable ones), plus what the model held after the step's events.
 */
export interface ReplayedStep extends Omit<SessionLogStepRecord, 'type' | Defaulted>, Required<Pick<SessionLogStepRecord, Defaulted>> {
  /** Which surface wrote the step: 1, plus one at each step number not above the previous one (replay starts afresh). */
  readonly session: number
  /** The system prompt the model holds: the text of the latest `system/message` (after a compaction, node 0's text). */
  readonly prompt: string
  /** Every live system message, by ascending node (node 0, then in-history appends); built when first read. */
  readonly systemMessages: readonly { readonly node: number; readonly text: string }[]
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
  /** The lines the reader skipped (a torn line per crash). */
  readonly warnings: SessionLogReadWarning[]
}

/** A session log that cannot be replayed; `message` names the file (`source`, when known) and the 1-based `line`. */
export class SessionLogError extends Error {
  override readonly name = 'SessionLogError'

  constructor(readonly source: string | undefined, readonly line: number | undefined, rule: string) {
    super(`session log${source === undefined ? '' : ` "${source}"`}${line === undefined ? '' : ` line ${line}`}: ${rule}`)
  }
}

const BLANK = /^[ \t\r]*$/
const GLUED_STEP = '{"type":"step"'

/** The in-history system messages (node > 0), highest node first, never changed: each step keeps the list it saw. */
interface HistoryMessage {
  readonly node: number
  readonly text: string
  readonly below: HistoryMessage | undefined
}

/** What the model holds at one point of a session: replaced, never changed, so a step keeps the value it saw. */
interface Held extends Pick<ReplayedStep, 'prompt' | 'tools' | 'config' | 'contextSnapshot'> {
  readonly node0?: string
  readonly history?: HistoryMessage
}

const NOTHING_HELD: Held = Object.freeze({ prompt: '', tools: Object.freeze([]), config: Object.freeze({}), contextSnapshot: '' })

/** Replays the log fed line by line (`line`, without its `\n`), then `end()`; accepts a UTF-8 BOM, `\r\n` and blank lines. */
export class SessionLogReplayer {
  readonly #steps: ReplayedStep[] = []
  readonly #warnings: SessionLogReadWarning[] = []
  #lineNumber = 0
  /** A line that is not JSON, waiting for the record after it to tell whether it is torn. */
  #suspect: { readonly line: number; readonly reason: string } | undefined
  #held = NOTHING_HELD
  /** The step whose events are being read. */
  #open: { readonly record: SessionLogStepRecord; readonly events: SurfaceEvent[]; usage?: UsageRecord } | undefined
  /** The current surface's session: its number, first line, and where the usage of each of its steps goes (open or replayed). */
  #session = { number: 0, start: 0, usageTargets: new Map<number, { usage?: UsageRecord }>() }

  constructor(private readonly source?: string) {}

  /** Throws a `SessionLogError` naming the line for a malformed record. */
  line(text: string): void {
    const number = ++this.#lineNumber
    let raw = number === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    if (raw.endsWith('\r')) raw = raw.slice(0, -1)
    if (BLANK.test(raw)) return
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      value = this.#notJson(raw, number, (error as SyntaxError).message)
      if (value === undefined) return
    }
    this.#settle(isStep(value))
    this.#apply(value, number)
  }

  /** Ends the log: a line still waiting was its torn last line. Returns the replay. */
  end(): SessionLogReplay {
    this.#settle(true)
    this.#finish()
    return { steps: this.#steps, warnings: this.#warnings }
  }

  /** Throws when the line cannot be torn; returns the complete step record glued to its end, or `undefined` to wait for the next record. */
  #notJson(raw: string, line: number, reason: string): unknown {
    // A resumed writer's first record is a step record, torn or not: a waiting line before one was torn as well.
    this.#settle(raw.startsWith(GLUED_STEP) || GLUED_STEP.startsWith(raw))
    if (!raw.startsWith('{')) throw this.#error(line, notJson(reason))
    const glued = gluedStep(raw)
    if (glued === undefined) this.#suspect = { line, reason }
    else this.#skip(line, 'skipped the torn start of the line (a record cut short when the writing process stopped) and kept the step record a resumed writer appended to it')
    return glued
  }

  /** Decides a waiting line by what follows it: a step record or the log's end make it torn, anything else an error. */
  #settle(nextIsStep: boolean): void {
    if (this.#suspect === undefined) return
    const { line, reason } = this.#suspect
    this.#suspect = undefined
    if (!nextIsStep) {
      throw this.#error(
        line,
        `${notJson(reason)} (a line cut short by a crash is skipped only as the last line of the log or right before the step record of a writer that resumed it)`,
      )
    }
    this.#skip(line, 'skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept')
  }

  /** Warns of a skipped torn line, naming the place as an error would. */
  #skip(line: number, what: string): void {
    const { message } = this.#error(line, what)
    this.#warnings.push({ kind: 'torn-line', ...(this.source === undefined ? {} : { source: this.source }), line, message })
  }

  #apply(value: unknown, number: number): void {
    const record = readRecord(value, (rule) => {
      throw this.#error(number, rule)
    })
    if (record.type === 'step') return this.#beginStep(record, number)
    if (record.type === 'usage') {
      const target = this.#session.usageTargets.get(record.step)
      if (target === undefined) {
        const { number: session, start } = this.#session
        const since = session > 1 ? ` in the session that starts at line ${start} (a step number at or below the previous one starts a new session)` : ''
        throw this.#error(number, `usage for step ${record.step} has no step record before it${since}; write the step, then its usage`)
      }
      target.usage = record
      return
    }
    if (this.#open === undefined) throw this.#error(number, `"${record.type}" comes before the first step record; a log starts with {"type":"step",…}`)
    this.#open.events.push(record)
    const held = this.#held
    if (record.type === 'request/header') this.#held = { ...held, tools: record.tools, config: record.config }
    else if (record.type === 'context/snapshot') this.#held = { ...held, contextSnapshot: record.text }
    else if (record.node === 0) this.#held = { ...held, node0: record.text, prompt: record.text }
    else this.#held = { ...held, history: withMessage(held.history, record.node, record.text), prompt: record.text }
  }

  #beginStep(record: SessionLogStepRecord, number: number): void {
    this.#finish()
    const last = this.#steps.at(-1)
    if (last === undefined || record.step <= last.step) {
      // A new surface: nothing the previous one sent is part of its conversation.
      this.#session = { number: this.#session.number + 1, start: number, usageTargets: new Map() }
      this.#held = NOTHING_HELD
    }
    if (record.compacted) this.#held = { ...this.#held, history: undefined, prompt: this.#held.node0 ?? '', contextSnapshot: '' }
    this.#open = { record, events: [] }
    this.#session.usageTargets.set(record.step, this.#open)
  }

  #finish(): void {
    const open = this.#open
    if (open === undefined) return
    this.#open = undefined
    const { type, ...fields } = open.record
    const { node0, history, ...held } = this.#held
    const step = {
      ...fields,
      toolsChanged: fields.toolsChanged ?? false,
      configChanged: fields.configChanged ?? false,
      reusablePrefixLength: fields.reusablePrefixLength ?? fields.stablePrefixLength,
      reusablePrefixBytes: fields.reusablePrefixBytes ?? fields.stablePrefixBytes,
      session: this.#session.number,
      ...held,
      events: open.events,
      // Built on first read: a copy of every live message in every step would make replay quadratic.
      get systemMessages() {
        const value: { node: number; text: string }[] = []
        for (let message = history; message !== undefined; message = message.below) {
          value.push({ node: message.node, text: message.text })
        }
        if (node0 !== undefined) value.push({ node: 0, text: node0 })
        value.reverse()
        // A frozen or sealed step keeps the getter: its properties can no longer be redefined.
        if (Object.getOwnPropertyDescriptor(this, 'systemMessages')?.configurable === true) {
          Object.defineProperty(this, 'systemMessages', { value, enumerable: true })
        }
        return value
      },
      ...(open.usage === undefined ? {} : { usage: open.usage }),
    }
    this.#session.usageTargets.set(fields.step, step)
    this.#steps.push(step as unknown as ReplayedStep)
  }

  #error(line: number, rule: string): SessionLogError {
    return new SessionLogError(this.source, line, rule)
  }
}

/** The list with `text` at `node`: the messages below it are shared, only those above it copied (none, for an append). */
function withMessage(top: HistoryMessage | undefined, node: number, text: string): HistoryMessage {
  const above: HistoryMessage[] = []
  let rest = top
  while (rest !== undefined && rest.node > node) {
    above.push(rest)
    rest = rest.below
  }
  let out: HistoryMessage = { node, text, below: rest?.node === node ? rest.below : rest }
  for (const message of above.reverse()) out = { node: message.node, text: message.text, below: out }
  return out
}

function isStep(value: unknown): boolean {
  return (value as { type?: unknown } | null)?.type === 'step'
}

function notJson(reason: string): string {
  return `not JSON (${reason}); each line holds one JSON object`
}

/** The complete step record at the end of a torn line, if one is there. */
function gluedStep(raw: string): unknown {
  for (let at = raw.indexOf(GLUED_STEP, 1); at > 0; at = raw.indexOf(GLUED_STEP, at + 1)) {
    try {
      const value: unknown = JSON.parse(raw.slice(at))
      if (isStep(value)) return value
    } catch {
      // Not where the appended record starts; try the next candidate.
    }
  }
  return undefined
}

/**
 * Replays JSONL session-log text: `append`/`replace` set their node's text, a `request/header` sets tools and config,
 * a `context/snapshot` the snapshot; a compacted step first drops in-history messages (node > 0) and the snapshot.
 * Throws a `SessionLogError` naming `source` and the line for malformed input.
 */
export function parseSessionLog(text: string, source?: string): SessionLogReplay {
  const replayer = new SessionLogReplayer(source)
  for (const line of text.split('\n')) replayer.line(line)
  return replayer.end()
}
