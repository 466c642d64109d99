#!/usr/bin/env node
/** The `promptloom` bin (package.json `bin` → dist/cli/main.js); see `CLI_HELP` in run.ts. */
import { runCli } from './run.js'

process.exitCode = runCli(process.argv.slice(2), process)
