import { basename } from 'node:path'
import { SessionLogError } from '../surface/session-log-replay.js'
import { readSessionLog } from '../surface/session-log-file.js'
import { CliError } from './terminal.js'

/** One session log read for the report: one agent, named after its file; `steps` holds at least one step, in log order. */
export type AgentLog = ReturnType<typeof readAgentLog>

/** The agent name for a log path: `logs/session.agent-1.jsonl` → `session.agent-1`. */
export function agentNameOf(file: string): string {
  return basename(file).replace(/\.jsonl$/i, '')
}

/**
 * Reads the log at `file` with the library's reader. Throws its `SessionLogError` for a malformed line,
 * and a `CliError` naming the file when it cannot be read or holds no step record.
 */
export function readAgentLog(file: string) {
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

/**
 * The logs with agents named after the files: with several logs, a dotted prefix they all share is dropped
 * (`session.agent-1.jsonl`, `session.agent-2.jsonl` → `agent-1`, `agent-2`); names that still collide become paths.
 */
export function agentNames(logs: readonly AgentLog[]): AgentLog[] {
  const names = logs.map((log) => log.name)
  const first = names[0] ?? ''
  let cut = 0
  for (let i = first.indexOf('.'); i >= 0 && names.length > 1; i = first.indexOf('.', i + 1)) {
    const prefix = first.slice(0, i + 1)
    if (!names.every((name) => name.startsWith(prefix) && name.length > prefix.length)) break
    cut = prefix.length
  }
  const short = names.map((name) => name.slice(cut))
  const collides = (name: string): boolean => short.indexOf(name) !== short.lastIndexOf(name)
  return logs.map((log, i) => ({ ...log, name: collides(short[i]!) ? log.file : short[i]! }))
}

/** Reads `files` as agents named by `agentNames`, passing each line a reader skipped to `onWarning`. */
export function readAgentLogs(files: readonly string[], onWarning: (message: string) => void): AgentLog[] {
  const logs = agentNames(files.map(readAgentLog))
  for (const log of logs) for (const warning of log.warnings) onWarning(warning.message)
  return logs
}
