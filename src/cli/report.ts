import { existsSync, realpathSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { LogError, readAgentLog, type AgentLog } from './log-reader.js'
import { renderReportHtml } from './report-html.js'
import { buildReport } from './report-model.js'

/**
 * `promptloom report`: reads session logs (one per agent), renders the HTML
 * report and writes it. Node-only (it reads and writes files); never
 * imported by the package root.
 */

/** The HTML report for `files`, each read as one agent's log; throws a `LogError` for a bad log. */
function reportHtmlFor(files: readonly string[]): string {
  return renderReportHtml(buildReport(readLogs(files)))
}

/**
 * Writes the report for `files` to `output` and returns the absolute path
 * written. Throws a `LogError` before writing anything when a log is bad,
 * when `output` is one of the inputs (it would destroy the log), or when no
 * log is given.
 */
export function writeReport(files: readonly string[], output: string): string {
  if (files.length === 0) throw new LogError('report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]')
  const target = resolve(output)
  for (const file of files) {
    if (samePath(file, target)) {
      throw new LogError(`output "${output}" is the input log "${file}"; writing it would destroy the log, so pick another -o path`)
    }
  }
  const page = reportHtmlFor(files)
  writeFileSync(target, page)
  return target
}

/**
 * Reads each log and names its agent after the file: with several logs, a
 * dotted prefix they all share is dropped (`session.agent-1.jsonl` and
 * `session.agent-2.jsonl` → `agent-1`, `agent-2`); agents whose names still
 * collide are named by their path.
 */
function readLogs(files: readonly string[]): AgentLog[] {
  return agentNames(files.map((file) => readAgentLog(file)))
}

/** See `readLogs`. */
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

function samePath(file: string, target: string): boolean {
  const a = resolve(file)
  if (a === target) return true
  // Symlinks and `..` spellings: compare real paths when both exist.
  if (!existsSync(a) || !existsSync(target)) return false
  return realpathSync(a) === realpathSync(target)
}
