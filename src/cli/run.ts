import { parseArgs } from 'node:util'
import { renderInspectTable } from './inspect.js'
import { LogError, readAgentLog } from './log-reader.js'
import { writeReport } from './report.js'
import { agentModel } from './report-model.js'

/** Where the CLI writes; the bin passes `process.stdout` / `process.stderr`. */
export interface CliOutput {
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
}

/** The text of `promptloom --help`. */
export const CLI_HELP = `promptloom — look at promptloom session logs

Usage:
  promptloom report <log.jsonl…> [-o report.html]
      Write one self-contained HTML report (no network needed to open it):
      per agent (one log = one agent, named after the file) a chart of the
      stable/reusable prefix share per step, tokens when logged, a per-step
      table of section/tool/config changes, warnings, withheld sections and
      predicted vs observed cache reuse; with several logs, the prefix the
      agents share. Default output: report.html.
  promptloom inspect <log.jsonl>
      Print a compact per-step table of one log.
  promptloom --help

Exit code 1 with a message on stderr for a malformed log (naming the file
and line), a missing file, or an -o path that is one of the inputs.
`

/**
 * Runs the CLI with `argv` (without node and the script) and returns the exit
 * code: 0 on success, 1 for a bad log or bad usage (the message goes to
 * `stderr`, prefixed `promptloom: `). Unexpected errors are rethrown.
 */
export function runCli(argv: readonly string[], out: CliOutput): number {
  try {
    return dispatch(argv, out)
  } catch (error) {
    if (error instanceof LogError || isParseArgsError(error)) {
      out.stderr.write(`promptloom: ${(error as Error).message}\n`)
      return 1
    }
    throw error
  }
}

function dispatch(argv: readonly string[], out: CliOutput): number {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      output: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  })
  const [command, ...files] = positionals
  if (values.help === true || command === 'help') {
    out.stdout.write(CLI_HELP)
    return 0
  }
  switch (command) {
    case 'report': {
      if (files.length === 0) throw new LogError('report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]')
      const written = writeReport(files, values.output ?? 'report.html')
      out.stdout.write(`report written: ${written}\n`)
      return 0
    }
    case 'inspect': {
      if (values.output !== undefined) throw new LogError('inspect prints to the terminal and takes no -o; use "promptloom report" for a file')
      if (files.length !== 1) throw new LogError(`inspect takes exactly one session log (got ${files.length}); usage: promptloom inspect <log.jsonl>`)
      out.stdout.write(renderInspectTable(agentModel(readAgentLog(files[0]!))))
      return 0
    }
    case undefined:
      throw new LogError('missing command; usage: promptloom report <log.jsonl…> [-o report.html] | promptloom inspect <log.jsonl> (see --help)')
    default:
      throw new LogError(`unknown command "${command}"; known commands: report, inspect (see --help)`)
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}
