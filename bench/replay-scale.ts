/**
 * Session-log scale: replaying an 'in-history' log without compaction, and
 * the CLI on long logs. Generates the logs with a real step surface and
 * writer, then measures each operation in a fresh child process (its own
 * heap), printing wall time, time per step, the heap the result keeps and the
 * process's peak resident memory. Linear replay shows as a flat time per step
 * and memory that grows with the log file, not with its square.
 *
 *   npx tsx bench/replay-scale.ts            (5k/10k/20k replay, report at 20k, inspect at 150k)
 *   npx tsx bench/replay-scale.ts --quick    (1k/2k/4k, inspect at 30k)
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readAgentLog, writeReport } from '../src/cli/run.js'
import { agentModel } from '../src/cli/report-model.js'
import { renderInspectTable } from '../src/cli/inspect.js'
import { createStepSurface, type PromptAssembly, type SystemPromptUpdate } from '../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../src/node.js'

type Operation = 'replay' | 'report' | 'inspect'

interface Measured {
  readonly ms: number
  readonly keptMb: number
  readonly peakRssMb: number
  readonly steps: number
}

const IDENTITY = 'You are Loom, a careful coding agent working in a monorepo. '.repeat(8)
const TOOLS = ['read', 'grep', 'edit', 'bash'].map((name) => ({ name, description: `The ${name} tool.`, parameters: { type: 'object' } }))

function assembly(step: number): Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'> {
  return {
    sections: [
      { name: 'identity', order: 0, text: IDENTITY },
      { name: 'status', order: 1, text: `Step ${step}: ${step % 7 === 0 ? 'tests failing' : 'tests passing'}.` },
    ],
    contexts: [],
    variables: {},
    tools: TOOLS,
  }
}

/** Writes `steps` steps; in 'in-history' mode every step appends its changed prompt after a growing history. */
function generate(path: string, steps: number, mode: SystemPromptUpdate, changeEvery = 1): void {
  const surface = createStepSurface({ systemPromptUpdate: mode })
  const writer = createSessionLogWriter(path, { truncate: true })
  for (let step = 1; step <= steps; step++) {
    const shown = changeEvery === 1 ? step : Math.floor(step / changeEvery) * changeEvery
    writer.write(surface.step({ assembly: assembly(shown), ...(mode === 'in-history' ? { historyLength: 2 * step } : {}) }))
  }
}

/** Runs in the child: one operation on one log, measured. */
function child(operation: Operation, path: string): void {
  const gc = (globalThis as { gc?: () => void }).gc!
  gc()
  const before = process.memoryUsage().heapUsed
  const started = performance.now()
  let kept: unknown
  let steps = 0
  if (operation === 'replay') {
    const replay = readSessionLog(path)
    kept = replay
    steps = replay.steps.length
  } else if (operation === 'report') {
    const out = join(tmpdir(), `promptloom-replay-scale-${process.pid}.html`)
    writeReport([path], out)
    rmSync(out)
  } else {
    const model = agentModel(readAgentLog(path))
    const table = renderInspectTable(model)
    steps = model.rows.length
    kept = table.length
  }
  const ms = performance.now() - started
  gc()
  const keptMb = (process.memoryUsage().heapUsed - before) / 2 ** 20
  void kept
  const measured: Measured = { ms, keptMb, peakRssMb: process.resourceUsage().maxRSS / 1024, steps }
  process.stdout.write(JSON.stringify(measured))
}

function measure(operation: Operation, path: string, heapMb?: number): Measured {
  const script = fileURLToPath(import.meta.url)
  const flags = ['--expose-gc', ...(heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`]), '--import', 'tsx']
  const out = execFileSync(process.execPath, [...flags, script, '--child', operation, path], { encoding: 'utf8', maxBuffer: 1 << 20 })
  return JSON.parse(out) as Measured
}

function row(label: string, steps: number, path: string, m: Measured): void {
  const mib = statSync(path).size / 2 ** 20
  console.log(
    `${label.padEnd(26)} ${String(steps).padStart(7)} steps  log ${mib.toFixed(1).padStart(6)} MiB  ${m.ms.toFixed(0).padStart(6)} ms  ${((1000 * m.ms) / steps).toFixed(1).padStart(6)} µs/step  kept ${m.keptMb.toFixed(1).padStart(6)} MiB  peak RSS ${m.peakRssMb.toFixed(0).padStart(5)} MiB`,
  )
}

function main(): void {
  const quick = process.argv.includes('--quick')
  const sizes = quick ? [1_000, 2_000, 4_000] : [5_000, 10_000, 20_000]
  const long = quick ? 30_000 : 150_000
  const dir = mkdtempSync(join(tmpdir(), 'promptloom-replay-scale-'))
  try {
    console.log(`node ${process.version}; each figure from a fresh child process\n`)
    let last = ''
    for (const steps of sizes) {
      const path = join(dir, `in-history-${steps}.jsonl`)
      generate(path, steps, 'in-history')
      row("replay 'in-history'", steps, path, measure('replay', path))
      last = path
    }
    const capped = 128
    const bounded = measure('replay', last, capped)
    row(`replay, heap capped ${capped} MB`, sizes.at(-1)!, last, bounded)
    row("report 'in-history'", sizes.at(-1)!, last, measure('report', last))
    const longPath = join(dir, `replace-${long}.jsonl`)
    generate(longPath, long, 'replace', 10)
    row("inspect 'replace'", long, longPath, measure('inspect', longPath))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const at = process.argv.indexOf('--child')
if (at >= 0) child(process.argv[at + 1] as Operation, process.argv[at + 2]!)
else main()
