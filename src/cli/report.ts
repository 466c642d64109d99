import { statSync, writeFileSync, type BigIntStats } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { readAgentLog, type AgentLog } from './agent-log.js'
import { CliError } from './cli-error.js'
import { renderReportHtml } from './report-html.js'
import { buildReport } from './report-model.js'

/**
 * `promptloom report`: reads session logs (one per agent), renders the HTML
 * report and writes it. Node-only (it reads and writes files); never
 * imported by the package root.
 */

/**
 * Writes the report for `files` to `output` and returns the absolute path
 * written; `onWarning` receives each line a reader skipped (a torn line).
 * Throws before writing anything when no log is given, a log is bad
 * (`SessionLogError`), or `output` cannot take the report (`CliError`): it
 * is the same file as an input (by device and inode, so symlinks and hard
 * links count), a directory, or in a folder that does not exist.
 */
export function writeReport(files: readonly string[], output: string, onWarning: (message: string) => void = () => {}): string {
  if (files.length === 0) throw new CliError('report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]')
  const target = resolve(output)
  checkOutput(output, target, files)
  const logs = agentNames(files.map((file) => readAgentLog(file)))
  for (const log of logs) for (const warning of log.warnings) onWarning(warning.message)
  const page = renderReportHtml(buildReport(logs))
  try {
    writeFileSync(target, page)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code
    if (typeof code !== 'string') throw error
    throw new CliError(`cannot write the report to "${output}" (${code}); pick an -o path in a folder you can write to`)
  }
  return target
}

/** Refuses an output that would destroy an input or cannot be written, before any log is read. */
function checkOutput(output: string, target: string, files: readonly string[]): void {
  const existing = statOf(target)
  if (existing === undefined) {
    const folder = statOf(dirname(target))
    if (folder === undefined) {
      throw new CliError(`cannot write the report to "${output}": the folder "${dirname(output)}" does not exist; create it or pick another -o path`)
    }
    if (!folder.isDirectory()) throw new CliError(`cannot write the report to "${output}": "${dirname(output)}" is a file, not a folder; pick another -o path`)
    return
  }
  if (existing.isDirectory()) throw new CliError(`output "${output}" is a directory; pass a file path such as "${join(output, 'report.html')}"`)
  for (const file of files) {
    const input = statOf(file)
    if (input !== undefined && input.dev === existing.dev && input.ino === existing.ino) {
      throw new CliError(`output "${output}" is the same file as the input log "${file}"; writing it would destroy the log, so pick another -o path`)
    }
  }
}

/** The file at `path` after following symlinks, or `undefined` when there is none. */
function statOf(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false })
  } catch (error) {
    // A path through a regular file ("log.jsonl/out.html") names nothing.
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined
    throw error
  }
}

/**
 * The logs with their agents named after the files: with several logs, a
 * dotted prefix they all share is dropped (`session.agent-1.jsonl` and
 * `session.agent-2.jsonl` → `agent-1`, `agent-2`); agents whose names still
 * collide are named by their path.
 */
export function agentNames(logs: readonly AgentLog[]): AgentLog[] {
  const names = logs.map((log) => log.name)
  let cut = 0
  if (names.length > 1) {
    const first = names[0]!
    for (let i = first.indexOf('.'); i >= 0; i = first.indexOf('.', i + 1)) {
      const prefix = first.slice(0, i + 1)
      if (!names.every((name) => name.startsWith(prefix) && name.length > prefix.length)) break
      cut = prefix.length
    }
  }
  const short = names.map((name) => name.slice(cut))
  const counts = new Map<string, number>()
  for (const name of short) counts.set(name, (counts.get(name) ?? 0) + 1)
  return logs.map((log, i) => ({ ...log, name: counts.get(short[i]!)! > 1 ? log.file : short[i]! }))
}
