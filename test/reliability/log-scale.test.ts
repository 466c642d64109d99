import { execFile } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { runCli } from '../../src/cli/run.js'
import { parseSessionLog } from '../../src/index.js'
import { forEachLine } from '../../src/surface/session-log-file.js'
import { readSessionLog } from '../../src/node.js'
import { messageLine, stepLine } from '../cli/fixtures.js'

// Long sessions: replay is linear and streams the file, so a log's size is
// bounded by the disk, not by one JavaScript string or a quadratic copy.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'promptloom-scale-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** An 'in-history' log without compaction: every step appends a changed prompt after the history. */
function inHistoryLog(steps: number): string {
  const base = 'You are Loom, a careful coding agent. '.repeat(10)
  const lines: string[] = []
  for (let step = 1; step <= steps; step++) {
    lines.push(stepLine(step, { stablePrefixLength: step === 1 ? 0 : base.length, changedSections: ['status'] }))
    lines.push(messageLine(`${base}Step ${step}.`, 'append', step === 1 ? 0 : 2 * step))
  }
  return lines.join('\n') + '\n'
}

function replayInChild(path: string, heapMb: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, '--import', 'tsx', join('test', 'reliability', 'log-scale-child.ts'), path],
      { cwd: ROOT, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    )
  })
}

describe('replay scale', () => {
  test("a 20,000-step 'in-history' log replays in a 192 MB heap (no step copies the live system messages)", async () => {
    const path = join(dir, 'in-history.jsonl')
    writeFileSync(path, inHistoryLog(20_000))
    const result = await replayInChild(path, 192)
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toMatchObject({ steps: 20_000, warnings: 0, lastStep: 20_000, messages: 20_000 })
  })

  test('inspect prints a 150,000-step log', () => {
    const path = join(dir, 'long.jsonl')
    const lines = [stepLine(1), messageLine('You are Loom.', 'append')]
    for (let step = 2; step <= 150_000; step++) lines.push(stepLine(step, { stablePrefixLength: 13 }))
    writeFileSync(path, lines.join('\n') + '\n')
    let stdout = ''
    let stderr = ''
    const code = runCli(['inspect', path], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } })
    expect([code, stderr]).toEqual([0, ''])
    const rows = stdout.split('\n').filter((line) => /^ *\d+ /.test(line))
    expect([rows.length, rows.at(-1)]).toEqual([150_000, '150000      13  100.0%    100.0%  -'])
  })

  test('a log over 512 MiB (more than one JavaScript string holds) reads, up to its last record', () => {
    const path = join(dir, 'huge.jsonl')
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, `${stepLine(1)}\n${messageLine('first', 'append')}\n`)
      // Blank lines are part of the format; 520 MiB of them put the last records past the limit.
      const blank = Buffer.from(`${' '.repeat(16_383)}\n`.repeat(64))
      for (let i = 0; i < 520; i++) writeSync(fd, blank)
      writeSync(fd, `${stepLine(2, { stablePrefixLength: 5 })}\n${messageLine('last')}\n`)
    } finally {
      closeSync(fd)
    }
    expect(statSync(path).size).toBeGreaterThan(512 * 2 ** 20)
    const { steps } = readSessionLog(path)
    expect(steps.map((step) => [step.step, step.prompt])).toEqual([
      [1, 'first'],
      [2, 'last'],
    ])
    let stdout = ''
    expect(runCli(['inspect', path], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => true } })).toBe(0)
    expect(stdout).toContain('1 steps'.replace('1', '2'))
    rmSync(path)
  })
})

describe('reading a file line by line', () => {
  test('gives the same lines as splitting the whole text, for every chunk size (characters split between chunks are joined)', () => {
    const text = '\uFEFF{"a":"é"}\r\n😀😀 ü\n\n' + 'x'.repeat(40) + '\n日本語\r\nlast line without a break'
    const path = join(dir, 'lines.txt')
    writeFileSync(path, text)
    for (let chunk = 1; chunk <= 24; chunk++) {
      const lines: string[] = []
      forEachLine(path, (line) => lines.push(line), chunk)
      expect(lines, `chunk of ${chunk} bytes`).toEqual(text.split('\n'))
    }
  })

  test('a file ending in a line break gives no extra empty line', () => {
    const path = join(dir, 'ends.txt')
    writeFileSync(path, 'a\nb\n')
    const lines: string[] = []
    forEachLine(path, (line) => lines.push(line), 3)
    expect(lines).toEqual(['a', 'b'])
  })

  test('the streamed reader and the text parser replay a log alike', () => {
    const text = inHistoryLog(50)
    const path = join(dir, 'alike.jsonl')
    writeFileSync(path, text)
    expect(readSessionLog(path).steps).toEqual(parseSessionLog(text, path).steps)
  })
})
