import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'

// The demo prints the command that writes its report again; run inside the
// repository, as printed, it must work.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'promptloom-hint-'))
const inRepo = join('logs', `hint-test-${process.pid}`)
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
  rmSync(join(ROOT, inRepo), { recursive: true, force: true })
})

function run(command: string, args: readonly string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

/** Runs the demo with `--log log` and returns the report path and the printed command's arguments after `npm`. */
async function demo(log: string): Promise<{ report: string; hint: string[] }> {
  const result = await run(process.execPath, ['--import', 'tsx', 'examples/agent-harness.ts', '--steps', '2', '--agents', '2', '--log', log], ROOT)
  expect(result.code).toBe(0)
  const match = /^report written: (.+) {2}\(again: npm (run report -- .+)\)$/m.exec(result.stdout)
  expect(match).not.toBeNull()
  return { report: match![1]!, hint: match![2]!.split(' ') }
}

describe("the demo's report hint", () => {
  test('prints npm run report with the logs and output, and running it rewrites the report (logs outside the repository)', async () => {
    const { report, hint } = await demo(join(tmp, 's.jsonl'))
    expect(hint).toEqual(['run', 'report', '--', join(tmp, 's.agent-1.jsonl'), join(tmp, 's.agent-2.jsonl'), '-o', join(tmp, 'report.html')])
    const before = statSync(report).mtimeMs
    const again = await run('npm', hint, ROOT)
    expect([again.code, again.stderr]).toEqual([0, ''])
    expect(again.stdout).toContain(`report written: ${report}`)
    expect(statSync(report).mtimeMs).toBeGreaterThanOrEqual(before)
  })

  test('gives paths inside the repository from its root, which npm runs the script in from any folder of it', async () => {
    const { report, hint } = await demo(join(inRepo, 's.jsonl'))
    expect(hint).toEqual(['run', 'report', '--', join(inRepo, 's.agent-1.jsonl'), join(inRepo, 's.agent-2.jsonl'), '-o', join(inRepo, 'report.html')])
    rmSync(report)
    const again = await run('npm', hint, join(ROOT, 'src', 'cli'))
    expect(again.code).toBe(0)
    expect(readFileSync(report, 'utf8').startsWith('<!doctype html>')).toBe(true)
    expect(existsSync(join(ROOT, 'src', 'cli', inRepo))).toBe(false)
  })
})
