/**
 * The session log on disk: the `node:fs` writer and reader of the JSONL
 * format defined in `session-log.ts`. Exported only from `promptloom/node`
 * (src/node.ts), so the package root stays free of Node built-ins and loads
 * in browsers and edge runtimes; everything pure (`serializeStep`,
 * `parseSessionLog`, the record types) stays in the root.
 */

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { parseSessionLog, serializeStep, serializeUsage, type ReplayedStep } from './session-log.js'
import type { StepResult, UsageRecord } from './step-surface.js'

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
 * lines are `serializeStep(result)`. Throws the file system's error when the
 * file cannot be written.
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

/**
 * Reads the JSONL file at `path` (UTF-8) and replays it with
 * `parseSessionLog`, whose errors name `path` and the line. Throws the file
 * system's error when the file cannot be read.
 *
 * @example
 * ```ts
 * import { readSessionLog } from 'promptloom/node'
 * const steps = readSessionLog('logs/agent-1.jsonl')
 * console.log(steps.at(-1)?.prompt)
 * ```
 */
export function readSessionLog(path: string): ReplayedStep[] {
  return parseSessionLog(readFileSync(path, 'utf8'), path)
}
