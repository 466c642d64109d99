import { execFile } from 'node:child_process'
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { cli, threeStepLog } from '../cli/fixtures.js'

// `report -o` must never destroy a log, and an output it cannot write is one
// line on stderr, not a stack trace.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'promptloom-output-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function log(name: string): string {
  const path = join(dir, name)
  writeFileSync(path, threeStepLog())
  return path
}

function script(argv: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...argv], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

describe('report -o never overwrites an input log', () => {
  test('a hard link to an input is refused and the log keeps its bytes', () => {
    const input = log('hard.jsonl')
    const link = join(dir, 'hard-link.html')
    linkSync(input, link)
    const run = cli('report', input, '-o', link)
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `promptloom: output "${link}" is the same file as the input log "${input}"; writing it would destroy the log, so pick another -o path\n`,
    })
    expect(readFileSync(input, 'utf8')).toBe(threeStepLog())
  })

  test('a symlink to an input is refused', () => {
    const input = log('soft.jsonl')
    const link = join(dir, 'soft-link.html')
    symlinkSync(input, link)
    expect(cli('report', input, '-o', link).code).toBe(1)
    expect(readFileSync(input, 'utf8')).toBe(threeStepLog())
  })

  test('an input reached through a hard link is refused when it is any of several inputs', () => {
    const first = log('first.jsonl')
    const second = log('second.jsonl')
    const alias = join(dir, 'alias.jsonl')
    linkSync(second, alias)
    expect(cli('report', first, alias, '-o', second).stderr).toContain(`is the same file as the input log "${alias}"`)
    expect(readFileSync(second, 'utf8')).toBe(threeStepLog())
  })
})

describe('an output the report cannot be written to', () => {
  test('a missing folder is one promptloom: line and exit 1, before any log is read', () => {
    const out = join(dir, 'missing', 'deeper', 'r.html')
    expect(cli('report', join(dir, 'not-read.jsonl'), '-o', out)).toEqual({
      code: 1,
      stdout: '',
      stderr: `promptloom: cannot write the report to "${out}": the folder "${join(dir, 'missing', 'deeper')}" does not exist; create it or pick another -o path\n`,
    })
  })

  test('a directory is one promptloom: line and exit 1', () => {
    const folder = join(dir, 'a-folder')
    mkdirSync(folder)
    expect(cli('report', log('d.jsonl'), '-o', folder)).toEqual({
      code: 1,
      stdout: '',
      stderr: `promptloom: output "${folder}" is a directory; pass a file path such as "${join(folder, 'report.html')}"\n`,
    })
  })

  test('a path through a regular file is one promptloom: line and exit 1', () => {
    const input = log('f.jsonl')
    const run = cli('report', input, '-o', join(input, 'r.html'))
    expect([run.code, run.stderr]).toEqual([1, `promptloom: cannot write the report to "${join(input, 'r.html')}": "${input}" is a file, not a folder; pick another -o path\n`])
  })

  test('any other error looking at the output or an input (a symlink loop, a name too long) is one promptloom: line', () => {
    const input = log('loops.jsonl')
    symlinkSync(join(dir, 'loop-b'), join(dir, 'loop-a'))
    symlinkSync(join(dir, 'loop-a'), join(dir, 'loop-b'))
    const long = join(dir, `${'x'.repeat(300)}.html`)
    const outputs = [[join(dir, 'loop-a'), 'ELOOP'], [join(dir, 'loop-a', 'r.html'), 'ELOOP'], [long, 'ENAMETOOLONG']] as const
    for (const [out, code] of outputs) {
      expect(cli('report', input, '-o', out)).toEqual({
        code: 1,
        stdout: '',
        stderr: `promptloom: cannot write the report to "${out}" (${code}); pick an -o path in a folder you can write to\n`,
      })
    }
    // An existing output is compared with every input, so each input is looked at.
    const existing = join(dir, 'existing.html')
    writeFileSync(existing, 'old')
    const run = cli('report', join(dir, 'loop-a'), '-o', existing)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^promptloom: cannot read session log ".*loop-a" \(ELOOP\); .*\n$/)
    expect(readFileSync(existing, 'utf8')).toBe('old')
  })

  test('the script prints no stack trace for a missing folder or a directory', async () => {
    const input = log('s.jsonl')
    for (const out of [join(dir, 'nope', 'r.html'), dir]) {
      const result = await script(['report', input, '-o', out])
      expect(result.code).toBe(1)
      expect(result.stderr.split('\n')).toEqual([expect.stringMatching(/^promptloom: /), ''])
      expect(existsSync(join(dir, 'nope'))).toBe(false)
    }
  })
})
