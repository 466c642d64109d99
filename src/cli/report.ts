import { statSync, writeFileSync, type BigIntStats } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { readAgentLogs } from './agent-log.js'
import { CliError } from './terminal.js'
import { renderReportHtml } from './report-html.js'
import { buildReport } from './report-model.js'

/**
 * `promptloom report`: writes the report for `files` (one log per agent) to `output` and returns the absolute
 * path written; `onWarning` receives each line a reader skipped. Throws before writing when no log is given,
 * a log is bad (`SessionLogError`), or `output` cannot take the report (`CliError`): it is an input (by device
 * and inode, so symlinks and hard links count), a directory, or in a folder that does not exist.
 */
export function writeReport(files: readonly string[], output: string, onWarning: (message: string) => void = () => {}): string {
  if (files.length === 0) throw new CliError('report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]')
  const target = resolve(output)
  const existing = statOf(target)
  if (existing === undefined) {
    const folder = statOf(dirname(target))
    if (folder === undefined) {
      throw new CliError(`cannot write the report to "${output}": the folder "${dirname(output)}" does not exist; create it or pick another -o path`)
    }
    if (!folder.isDirectory()) throw new CliError(`cannot write the report to "${output}": "${dirname(output)}" is a file, not a folder; pick another -o path`)
  } else if (existing.isDirectory()) {
    throw new CliError(`output "${output}" is a directory; pass a file path such as "${join(output, 'report.html')}"`)
  } else {
    for (const file of files) {
      const input = statOf(file)
      if (input !== undefined && input.dev === existing.dev && input.ino === existing.ino) {
        throw new CliError(`output "${output}" is the same file as the input log "${file}"; writing it would destroy the log, so pick another -o path`)
      }
    }
  }
  const page = renderReportHtml(buildReport(readAgentLogs(files, onWarning)))
  try {
    writeFileSync(target, page)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code
    if (typeof code !== 'string') throw error
    throw new CliError(`cannot write the report to "${output}" (${code}); pick an -o path in a folder you can write to`)
  }
  return target
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
