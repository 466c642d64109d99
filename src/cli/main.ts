#!/usr/bin/env node
/** The `promptloom` bin (package.json `bin` → dist/cli/main.js); see `CLI_HELP` in run.ts. */
import { runCli } from './run.js'

// A reader that stops early (`promptloom inspect log | head`) closes the pipe: not an error, so no stack trace. The
// write fails after runCli returned, so the exit code stays its own (0, or check's verdict).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
  process.exit()
})
process.exitCode = runCli(process.argv.slice(2), process)
