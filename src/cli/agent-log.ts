import { basename } from 'node:path'
import { SessionLogError, type ReplayedStep, type SessionLogReadWarning } from '../surface/session-log-replay.js'
import { readSessionLog } from '../surface/session-log-file.js'
import { CliError } from './cli-error.js'

/** One session log read for the report: one agent. */
export interface AgentLog {
  /** The agent's name: the file name without `.jsonl`. */
  readonly name: string
  /** The path it was read from. */
  readonly file: string
  /** The replayed steps, in log order (at least one). */
  readonly steps: readonly ReplayedStep[]
  /** What the reader skipped (a torn line). */
  readonly warnings: readonly SessionLogReadWarning[]
}

/** The agent name for a log path: `logs/session.agent-1.jsonl` → `session.agent-1`. */
export function agentNameOf(file: string): string {
  return basename(file).replace(/\.jsonl$/i, '')
}

/**
 * Reads the log at `file` with the library's reader. Throws its
 * `SessionLogError` for a malformed line, and a `CliError` naming the file
 * when it cannot be read or holds no step record.
 */
export function readAgentLog(file: string): AgentLog {
  let replay
  try {
    replay = readSessionLog(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code
    if (error instanceof SessionLogError || typeof code !== 'string') throw error
    throw new CliError(`cannot read session log "${file}" (${code}); pass the path of a .jsonl file the session-log writer wrote`)
  }
  if (replay.steps.length === 0) {
    throw new CliError(`session log "${file}" holds no step records; a session log starts with {"type":"step",…} (is it empty?)`)
  }
  return { name: agentNameOf(file), file, steps: replay.steps, warnings: replay.warnings }
}
