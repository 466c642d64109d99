/**
 * The session log on disk: the `node:fs` writer and reader of the JSONL
 * format defined in `session-log.ts`. Exported only from `promptloom/node`
 * (src/node.ts), so the package root stays free of Node built-ins and loads
 * in browsers and edge runtimes; everything pure (`serializeStep`,
 * `parseSessionLog`, the record types) stays in the root.
 */

import { appendFileSync, closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs'
import { SessionLogError, SessionLogReplayer, type SessionLogReplay } from './session-log-replay.js'
import { serializeStep, serializeUsage } from './session-log.js'
import type { StepResult } from './step-result.js'
import type { UsageRecord } from './usage-record.js'

/** Appends step results to a JSONL file; made by `createSessionLogWriter`. */
export interface SessionLogWriter {
  /** The JSONL file written to. */
  readonly path: string
  /** Appends the step record and the step's events with one synchronous write (flushed per step). */
  write(result: StepResult): void
  /** Appends a `surface.observeUsage()` record as its own line (synchronous, like `write`). */
  writeUsage(record: UsageRecord): void
}

/** Options of `createSessionLogWriter`. */
export interface SessionLogWriterOptions {
  /** Empty the file first instead of appending to it (starting a new session rather than resuming one). Default `false`. */
  readonly truncate?: boolean
}

/**
 * Creates a writer that appends each `StepResult` to the JSONL file at
 * `path` (created when missing; its directory must exist) with
 * `fs.appendFileSync`, so every step is on disk before `write` returns. The
 * lines are `serializeStep(result)`. Resuming a file whose last line is
 * unfinished (its writer died mid-write) first ends that line, so the torn
 * record stays alone on its line and the reader can skip it. Throws the file
 * system's error when the file cannot be written.
 *
 * @example
 * ```ts
 * import { createSessionLogWriter } from 'promptloom/node'
 * const log = createSessionLogWriter('logs/agent-1.jsonl', { truncate: true })
 * log.write(surface.step({ assembly }))
 * ```
 */
export function createSessionLogWriter(path: string, options: SessionLogWriterOptions = {}): SessionLogWriter {
  if (options.truncate === true) writeFileSync(path, '')
  else if (endsMidLine(path)) appendFileSync(path, '\n')
  return {
    path,
    write(result: StepResult): void {
      appendFileSync(path, serializeStep(result))
    },
    writeUsage(record: UsageRecord): void {
      appendFileSync(path, serializeUsage(record))
    },
  }
}

/** Whether the file at `path` exists, is not empty and does not end with a line break. */
function endsMidLine(path: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  try {
    const { size } = fstatSync(fd)
    if (size === 0) return false
    const last = new Uint8Array(1)
    readSync(fd, last, 0, 1, size - 1)
    return last[0] !== 0x0a
  } finally {
    closeSync(fd)
  }
}

/**
 * Reads the JSONL file at `path` (UTF-8) as a stream of lines and replays it
 * like `parseSessionLog`: the replay's `warnings` name a torn line it skipped,
 * and its errors are `SessionLogError`s naming `path` and the line (a log
 * still being written may end mid-record: that line is reported as torn).
 * Memory holds the replay and one line at a time, never the whole file, so
 * logs of any size read. Throws the file system's error when the file cannot
 * be read.
 *
 * @example
 * ```ts
 * import { readSessionLog } from 'promptloom/node'
 * const { steps, warnings } = readSessionLog('logs/agent-1.jsonl')
 * for (const warning of warnings) console.warn(warning.message)
 * console.log(steps.at(-1)?.prompt)
 * ```
 */
export function readSessionLog(path: string): SessionLogReplay {
  const replayer = new SessionLogReplayer(path)
  forEachLine(path, (line) => replayer.line(line))
  return replayer.end()
}

const CHUNK_BYTES = 1 << 20

/**
 * Calls `each` with every line of the file at `path` (without its `\n`),
 * decoding UTF-8 chunk by chunk; a character split between chunks is joined.
 * Throws a `SessionLogError` for a line too long for one JavaScript string.
 */
export function forEachLine(path: string, each: (line: string) => void, chunkBytes = CHUNK_BYTES): void {
  const fd = openSync(path, 'r')
  try {
    const buffer = new Uint8Array(chunkBytes)
    // The BOM is kept so the replayer, which also reads plain text, handles it in one place.
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
    let pieces: string[] = []
    let lineNumber = 1
    const whole = (tail: string): string => {
      if (pieces.length === 0) return tail
      try {
        return pieces.join('') + tail
      } catch (error) {
        if (!(error instanceof RangeError)) throw error
        throw new SessionLogError(path, lineNumber, 'the line is longer than the longest string JavaScript can hold; a line holds one record, so this is not a log the session-log writer wrote')
      } finally {
        pieces = []
      }
    }
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null)
      const text = read === 0 ? decoder.decode() : decoder.decode(buffer.subarray(0, read), { stream: true })
      let start = 0
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
        each(whole(text.slice(start, end)))
        lineNumber++
        start = end + 1
      }
      if (start < text.length) pieces.push(text.slice(start))
      if (read === 0) break
    }
    if (pieces.length > 0) each(whole(''))
  } finally {
    closeSync(fd)
  }
}
