import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { budgetLog, cli, jsonl, messageLine, stepLine, threeStepLog } from './fixtures.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'promptloom-cli-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function file(name: string, text: string): string {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}

describe('promptloom report', () => {
  test('writes one HTML file for several logs and prints its path', () => {
    const a = file('one.jsonl', threeStepLog())
    const b = file('two.jsonl', threeStepLog())
    const out = join(tmp, 'r.html')
    expect(cli('report', a, b, '-o', out)).toEqual({ code: 0, stdout: `report written: ${out}\n`, stderr: '' })
    const page = readFileSync(out, 'utf8')
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect([page.includes('data-agent="one"'), page.includes('data-agent="two"')]).toEqual([true, true])
  })

  test('a malformed line fails with exit 1, names the file and line on stderr, and writes nothing', () => {
    const bad = file('bad.jsonl', jsonl(stepLine(1), messageLine('p', 'append'), '{oops', messageLine('q')))
    const out = join(tmp, 'never.html')
    const run = cli('report', bad, '-o', out)
    expect([run.code, run.stdout]).toEqual([1, ''])
    expect(run.stderr).toMatch(new RegExp(`^promptloom: session log "${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" line 3: not JSON[^\n]*\n$`))
    expect(existsSync(out)).toBe(false)
  })

  test('refuses an -o that is one of the input logs and leaves the log untouched', () => {
    const log = file('keep.jsonl', threeStepLog())
    const before = readFileSync(log, 'utf8')
    const run = cli('report', log, '-o', log)
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `promptloom: output "${log}" is the same file as the input log "${log}"; writing it would destroy the log, so pick another -o path\n`,
    })
    expect(readFileSync(log, 'utf8')).toBe(before)
  })

  test('refuses an -o that reaches an input through a symlink', () => {
    const log = file('linked.jsonl', threeStepLog())
    const link = join(tmp, 'link.html')
    symlinkSync(log, link)
    const mtime = statSync(log).mtimeMs
    expect(cli('report', log, '-o', link).code).toBe(1)
    expect(statSync(log).mtimeMs).toBe(mtime)
  })

  test('a missing log names the file', () => {
    const missing = join(tmp, 'nope.jsonl')
    expect(cli('report', missing, '-o', join(tmp, 'x.html')).stderr).toBe(
      `promptloom: cannot read session log "${missing}" (ENOENT); pass the path of a .jsonl file the session-log writer wrote\n`,
    )
  })

  test('without a log it explains the usage', () => {
    expect(cli('report')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'promptloom: report needs at least one session log; usage: promptloom report <log.jsonl…> [-o report.html]\n',
    })
  })
})

describe('promptloom inspect', () => {
  test('prints one row per step with the classified changes', () => {
    const run = cli('inspect', file('i.jsonl', threeStepLog()))
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^i \(.*i\.jsonl\): 3 steps, mean stable prefix 83\.8%, 1 warning$/)
    expect(lines.slice(1)).toEqual([
      'step  prompt  stable  reusable  changes',
      '   1      38   first      0.0%  first render (3 sections); initial header',
      '   2      38  100.0%    100.0%  -',
      '   3      34   67.6%     67.6%  +web -plan ~persona; tools +browse; config ~temperature',
      '      ! section "persona" references volatile variable "date"',
    ])
  })

  test('adds token, reusable and cache columns only when the log has them', () => {
    const text = jsonl(
      stepLine(1, { promptTokens: 10, stablePrefixTokens: 0, reusablePrefixLength: 0 }),
      messageLine('abcd', 'append'),
      stepLine(2, { stablePrefixLength: 4, promptTokens: 10, stablePrefixTokens: 10, reusablePrefixLength: 4 }),
      JSON.stringify({ type: 'usage', step: 2, inputTokens: 12, cachedInputTokens: 8, predictedTokens: 10 }),
    )
    const lines = cli('inspect', file('t.jsonl', text)).stdout.split('\n')
    expect(lines.slice(1, 4)).toEqual([
      'step  prompt  stable  reusable  tokens  cached/input (pred)  changes',
      '   1       4   first      0.0%    0/10                    -  first render',
      '   2       4  100.0%    100.0%   10/10            8/12 (10)  -',
    ])
  })

  test('shows how many sections the budget withholds, and which were withheld or restored as changes', () => {
    const lines = cli('inspect', file('b.jsonl', budgetLog())).stdout.trimEnd().split('\n')
    expect(lines.slice(1)).toEqual([
      'step  prompt  stable  reusable  tokens  withheld  changes',
      '   1      24   first      0.0%     0/6         0  first render (2 sections)',
      '   2      20   75.0%     75.0%     4/5         1  +tips; withheld examples (budget)',
      '      ! token budget withheld prompt section "examples"',
      '   3      20  100.0%    100.0%     5/5         1  -',
      '   4      24   62.5%     62.5%     4/6         0  -tips; restored examples (budget)',
      '      ! token budget restored prompt section "examples"',
    ])
  })

  test('marks an over-budget step in the withheld column', () => {
    const text = jsonl(stepLine(1, { sections: ['a'], withheld: ['b'], overBudget: true }), messageLine('A', 'append'))
    expect(cli('inspect', file('o.jsonl', text)).stdout.split('\n')[2]).toBe('   1       1   first      0.0%    1 over  first render (1 sections); withheld b (budget)')
  })

  test('takes exactly one log', () => {
    expect(cli('inspect').stderr).toBe('promptloom: inspect takes exactly one session log (got 0); usage: promptloom inspect <log.jsonl>\n')
  })
})

describe('the command line', () => {
  test('an unknown command lists the known ones', () => {
    expect(cli('show', 'x.jsonl')).toEqual({ code: 1, stdout: '', stderr: 'promptloom: unknown command "show"; known commands: report, inspect, check (see --help)\n' })
  })

  test('an unknown flag fails with exit 1', () => {
    const run = cli('report', '--out', 'x.html')
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^promptloom: Unknown option '--out'/)
  })

  test('--help prints both commands and exits 0', () => {
    const run = cli('--help')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('promptloom report <log.jsonl…> [-o report.html]')
    expect(run.stdout).toContain('promptloom inspect <log.jsonl>')
  })

  test('--help lists the -o/--output option and --version', () => {
    const help = cli('--help').stdout
    expect(help).toMatch(/^ {2}-o, --output <file> {4}Where report writes the HTML \(default: report\.html\)\.$/m)
    expect(help).toMatch(/^ {2}-v, --version {10}Print the version\.$/m)
  })

  test('--version prints the package version and exits 0', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(cli('--version')).toEqual({ code: 0, stdout: `promptloom ${version}\n`, stderr: '' })
    expect(cli('-v').stdout).toBe(`promptloom ${version}\n`)
  })

  test('the package has npm scripts that run the CLI from source', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    expect([pkg.scripts.report, pkg.scripts.inspect]).toEqual(['tsx src/cli/main.ts report', 'tsx src/cli/main.ts inspect'])
  })

  test('the bin entry is the built src/cli/main.ts, which starts with a node shebang', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin).toEqual({ promptloom: './dist/cli/main.js' })
    expect(readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  test('the script exits 1 and prints the message on stderr for a malformed log', async () => {
    const bad = file('proc.jsonl', '{"type":"step"}\n')
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'inspect', bad], { cwd: ROOT }, (error, _stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr })
      })
    })
    expect(result).toEqual({ code: 1, stderr: `promptloom: session log "${bad}" line 1: a "step" record's "step" must be a positive integer (got nothing)\n` })
  })

  test('the script exits 0 quietly when its reader closes the pipe early (promptloom inspect log | head)', async () => {
    // Over 64 KiB of table, more than a pipe buffers, in case the child writes before the pipe is closed.
    const steps = Array.from({ length: 3000 }, (_, i) => stepLine(i + 2, { stablePrefixLength: 5, stablePrefixBytes: 5 }))
    const log = file('long.jsonl', jsonl(stepLine(1), messageLine('hello', 'append'), ...steps))
    const args = ['--import', 'tsx', 'src/cli/main.ts', 'inspect', log]
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  })
})
