// The session log on disk: the `node:fs` writer and reader of the JSONL format in `session-log.ts` (`promptloom/node`).

import { appendFileSync, closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { SessionLogError, SessionLogReplayer, type SessionLogReplay } from './session-log-replay.js'
import { serializeStep, serializeUsage } from './session-log.js'
import type { StepResult, UsageRecord } from './step-result.js'

/** Appends step results to a JSONL file; made by `createSessionLogWriter`. */
export interface SessionLogWriter {
  /** The JSONL file written to, absolute: resolved once, so a later `process.chdir` does not move the log. */
  readonly path: string
  /** Appends the step record and the step's events with one synchronous write (flushed per step). */
  write(result: StepResult): void
  /** Appends a `surface.observeUsage()` record as its own line (synchronous); throws `serializeUsage`'s `TypeError` first. */
  writeUsage(record: UsageRecord): void
}

/** Options of `createSessionLogWriter`. */
export interface SessionLogWriterOptions {
  /** Empty the file first instead of appending to it (starting a new session rather than resuming one). Default `false`. */
  readonly truncate?: boolean
}

/**
 * Creates a writer that appends `serializeStep(result)` to the JSONL file at `path` (created when missing; its directory
 * must exist; a relative `path` is resolved now), on disk before `write` returns. Resuming a file whose writer died
 * mid-line first ends that line, so the reader can skip the torn record. Throws the file system's error when the file
 * cannot be written.
 *
 * @example
 * ```ts
 * import { createSessionLogWriter } from 'promptloom/node'
 * const log = createSessionLogWriter('logs/agent-1.jsonl', { truncate: true })
 * log.write(surface.step({ assembly }))
 * ```
 */
export function createSessionLogWriter(path: string, options: SessionLogWriterOptions = {}): SessionLogWriter {
  const file = resolve(path)
  if (options.truncate === true) writeFileSync(file, '')
  else if (endsMidLine(file)) appendFileSync(file, '\n')
  return {
    path: file,
    write: (result) => appendFileSync(file, serializeStep(result)),
    writeUsage: (record) => appendFileSync(file, serializeUsage(record)),
  }
}

/** Whether the file at `path` exists, is not empty and does not end with a line break. */
function endsMidLine(path: string): boolean {
  const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0
  if (size === 0) return false
  const fd = openSync(path, 'r')
  try {
    const last = new Uint8Array(1)
    readSync(fd, last, 0, 1, size - 1)
    return last[0] !== 0x0a
  } finally {
    closeSync(fd)
  }
}

/**
 * Replays the JSONL file at `path` (UTF-8) like `parseSessionLog`, holding one line at a time so logs of any size read;
 * a torn line it skipped (a log being written may end mid-record) is in the replay's `warnings`. Throws a
 * `SessionLogError` naming `path` and the line for a malformed record, the file system's error for an unreadable file.
 */
export function readSessionLog(path: string): SessionLogReplay {
  const replayer = new SessionLogReplayer(path)
  forEachLine(path, (line) => replayer.line(line))
  return replayer.end()
}

/**
 * Calls `each` with every line of the file at `path` (without its `\n`), decoding UTF-8 chunk by chunk; a character
 * split between chunks is joined. Throws a `SessionLogError` for a line too long for one JavaScript string.
 */
export function forEachLine(path: string, each: (line: string) => void, chunkBytes = 1 << 20): void {
  const fd = openSync(path, 'r')
  try {
    const buffer = new Uint8Array(chunkBytes)
    // The BOM is kept so the replayer, which also reads plain text, handles it in one place.
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
    let pieces: string[] = []
    let lineNumber = 1
    const emit = (tail: string): void => {
      let line
      try {
        line = pieces.join('') + tail
      } catch (error) {
        if (!(error instanceof RangeError)) throw error
        throw new SessionLogError(path, lineNumber, 'the line is longer than the longest string JavaScript can hold; a line holds one record, so this is not a log the session-log writer wrote')
      }
      pieces = []
      lineNumber++
      each(line)
    }
    let read
    do {
      read = readSync(fd, buffer, 0, chunkBytes, null)
      // The last read (0 bytes) flushes the decoder.
      const lines = decoder.decode(buffer.subarray(0, read), { stream: read > 0 }).split('\n')
      const rest = lines.pop()!
      for (const line of lines) emit(line)
      if (rest !== '') pieces.push(rest)
    } while (read > 0)
    if (pieces.length > 0) emit('')
  } finally {
    closeSync(fd)
  }
}
