import { readFileSync, statSync, writeFileSync, type BigIntStats } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { readSessionLog } from '../surface/session-log-file.js'
import { SessionLogError } from '../surface/session-log-replay.js'
import { checkLog, DEFAULT_MIN_REUSABLE, renderCheck, renderInspectTable, terminalSafe, type CheckThresholds } from './inspect.js'
import { renderReportHtml } from './report-html.js'
import { agentModel, buildReport } from './report-model.js'

/** Where the CLI writes; the bin passes `process.stdout` / `process.stderr`. */
export type CliOutput = Readonly<Record<'stdout' | 'stderr', { write(text: string): unknown }>>

const CLI_HELP = `promptloom — look at promptloom session logs

Usage:
  promptloom report <log.jsonl…> [-o report.html]
      Write one self-contained HTML report (no network needed to open it):
      per agent (one log = one agent, named after the file) a chart of the
      stable/reusable prefix share per step, tokens when logged, a per-step
      table of section/tool/config changes, warnings, withheld sections and
      predicted vs observed cache reuse; with several logs, the prefix the
      agents share.
      Steps that lost cache reuse show why (the section, its layer, the
      variable, or the tools) with the section's text before and after.
  promptloom inspect <log.jsonl>
      Print a compact per-step table of one log.
  promptloom check <log.jsonl…> [--min-reusable F] [--max-breaks N]
      A CI gate: exit 0 when every log's mean reusable prefix share (steps
      after the first) is at least F and it has at most N cache breaks;
      exit 1 listing each failing log with its figures and its breaks.

Options:
  -o, --output <file>    Where report writes the HTML (default: report.html).
                         Never one of the input logs; its folder must exist.
  --min-reusable <F>     check: the least mean reusable share, a number from
                         0 to 1 (default ${DEFAULT_MIN_REUSABLE}).
  --max-breaks <N>       check: the most cache breaks per log, an integer
                         (default: no limit).
  -h, --help             Print this help.
  -v, --version          Print the version.

A log may hold a torn line per crash (a record cut short when its writer
stopped mid-write): each is skipped with a warning on stderr. Exit code 1
with one message on stderr for a malformed log (naming the file and line), a
missing file, or an -o path that cannot take the report. check exits 2 for
bad arguments (with a usage line), a log it cannot read, or any other error
that stops it: 1 always means checked and failed.
`

const CHECK_USAGE = 'usage: promptloom check <log.jsonl…> [--min-reusable F] [--max-breaks N]'

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  'min-reusable': { type: 'string' },
  'max-breaks': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const

/** A failure the CLI reports as one `promptloom: …` line on stderr with exit code 1 (bad usage, an unreadable log, an unwritable output). */
class CliError extends Error {
  override readonly name = 'CliError'
}

/**
 * Runs the CLI on `argv` (without node and the script); returns 0, or 1 for a bad log, usage or output (one `promptloom: `
 * line on stderr). `check` returns 2 for any error, other commands rethrow unexpected ones. Log text goes through `terminalSafe`.
 */
export function runCli(argv: readonly string[], out: CliOutput): number {
  // check is a CI gate: "could not check" (2) must differ from "checked and failed" (1), wherever the options stand.
  const checking = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false }).positionals[0] === 'check'
  try {
    return dispatch(argv, out)
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    const badArgs = typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
    if (error instanceof CliError || error instanceof SessionLogError || badArgs) {
      const usage = checking && badArgs ? `; ${CHECK_USAGE}` : ''
      out.stderr.write(`promptloom: ${terminalSafe((error as Error).message)}${usage}\n`)
      return checking ? 2 : 1
    }
    if (!checking) throw error
    out.stderr.write(`promptloom: check could not finish: ${terminalSafe(String(error))}\n`)
    return 2
  }
}

function dispatch(argv: readonly string[], out: CliOutput): number {
  const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
  const [command, ...files] = positionals
  if (values.help === true || command === 'help') {
    out.stdout.write(CLI_HELP)
    return 0
  }
  if (values.version === true) {
    // The package.json two folders up, from src/cli and from dist/cli alike.
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    out.stdout.write(`promptloom ${String(version)}\n`)
    return 0
  }
  const warn = (message: string): void => void out.stderr.write(`promptloom: warning: ${terminalSafe(message)}\n`)
  for (const flag of command === 'check' ? [] : (['min-reusable', 'max-breaks'] as const)) {
    if (values[flag] !== undefined) throw new CliError(`--${flag} belongs to "promptloom check"; ${command ?? 'this command'} takes no --${flag}`)
  }
  switch (command) {
    case 'check': {
      if (values.output !== undefined) throw new CliError(`check prints to the terminal and takes no -o; ${CHECK_USAGE}`)
      if (files.length === 0) throw new CliError(`check needs at least one session log; ${CHECK_USAGE}`)
      const thresholds = thresholdsOf(values['min-reusable'], values['max-breaks'])
      const results = readAgentLogs(files, warn).map((log) => checkLog(log, thresholds))
      out.stdout.write(renderCheck(results, thresholds))
      return results.every((result) => result.passed) ? 0 : 1
    }
    case 'report': {
      const written = writeReport(files, values.output ?? 'report.html', warn)
      out.stdout.write(`report written: ${terminalSafe(written)}\n`)
      return 0
    }
    case 'inspect': {
      if (values.output !== undefined) throw new CliError('inspect prints to the terminal and takes no -o; use "promptloom report" for a file')
      if (files.length !== 1) throw new CliError(`inspect takes exactly one session log (got ${files.length}); usage: promptloom inspect <log.jsonl>`)
      out.stdout.write(renderInspectTable(agentModel(readAgentLogs(files, warn)[0]!)))
      return 0
    }
    case undefined:
      throw new CliError('missing command; usage: promptloom report <log.jsonl…> [-o report.html] | promptloom inspect <log.jsonl> | promptloom check <log.jsonl…> (see --help)')
    default:
      throw new CliError(`unknown command "${command}"; known commands: report, inspect, check (see --help)`)
  }
}

function thresholdsOf(minReusable: string | undefined, maxBreaks: string | undefined): CheckThresholds {
  const share = Number(minReusable ?? DEFAULT_MIN_REUSABLE)
  if (minReusable !== undefined && (minReusable.trim() === '' || !Number.isFinite(share) || share < 0 || share > 1)) {
    throw new CliError(`--min-reusable must be a number from 0 to 1, such as 0.9 (got "${minReusable}"); ${CHECK_USAGE}`)
  }
  if (maxBreaks !== undefined && !(/^\d+$/.test(maxBreaks) && Number.isSafeInteger(Number(maxBreaks)))) {
    throw new CliError(`--max-breaks must be a non-negative integer (got "${maxBreaks}"); ${CHECK_USAGE}`)
  }
  return { minReusable: share, maxBreaks: maxBreaks === undefined ? undefined : Number(maxBreaks) }
}

/**
 * `promptloom report`: writes the report for `files` (one log per agent) to `output`; returns the absolute path. Throws
 * before writing for no log, a bad log (`SessionLogError`), or an `output` that is an input (by device and inode), a
 * directory, in a missing folder, or refused (`CliError`). `onWarning` receives each line a reader skipped.
 */
export function writeReport(files: readonly string[], output: string, onWarning: (message: string) => void = () => {}): string {
  if (files.length === 0) throw new CliError('report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]')
  const target = resolve(output)
  const unwritable = (code: string): string =>
    `cannot write the report to "${output}" (${code}); pick an -o path in a folder you can write to`
  const existing = statOf(target, unwritable)
  if (existing === undefined) {
    const folder = statOf(dirname(target), unwritable)
    if (folder === undefined) {
      throw new CliError(`cannot write the report to "${output}": the folder "${dirname(output)}" does not exist; create it or pick another -o path`)
    }
    if (!folder.isDirectory()) throw new CliError(`cannot write the report to "${output}": "${dirname(output)}" is a file, not a folder; pick another -o path`)
  } else if (existing.isDirectory()) {
    throw new CliError(`output "${output}" is a directory; pass a file path such as "${join(output, 'report.html')}"`)
  } else {
    for (const file of files) {
      // An input that cannot be looked at is not the output; reading it fails, with its own message, before any write.
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
    throw new CliError(unwritable(code))
  }
  return target
}

/** The file at `path` (symlinks followed), else `undefined`; given `failure`, an error but ENOTDIR throws its `CliError`. */
function statOf(path: string, failure?: (code: string) => string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code
    if (typeof code !== 'string') throw error
    // A path through a regular file ("log.jsonl/out.html") names nothing.
    if (code === 'ENOTDIR' || failure === undefined) return undefined
    throw new CliError(failure(code))
  }
}

/** One session log read for the report: one agent, named after its file; `steps` holds at least one step, in log order. */
export type AgentLog = ReturnType<typeof readAgentLog>

/** The agent name for a log path: `logs/session.agent-1.jsonl` → `session.agent-1`. */
export const agentNameOf = (file: string): string => basename(file).replace(/\.jsonl$/i, '')

/** Reads the log at `file`; throws `SessionLogError` for a malformed line, `CliError` if unreadable or without a step. */
export function readAgentLog(file: string) {
  let replay
  try {
    replay = readSessionLog(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code
    if (typeof code !== 'string') throw error
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
function readAgentLogs(files: readonly string[], onWarning: (message: string) => void): AgentLog[] {
  const logs = agentNames(files.map(readAgentLog))
  for (const log of logs) for (const warning of log.warnings) onWarning(warning.message)
  return logs
}
