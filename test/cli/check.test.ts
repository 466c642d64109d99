import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { signal } from '@preact/signals-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createStepSurface } from '../../src/index.js'
import { createSessionLogWriter } from '../../src/node.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'
import { cli, headerLine, jsonl, messageLine, stepLine } from './fixtures.js'

// promptloom check: the CI gate over session logs (exit 0 pass, 1 fail, 2 could not check).

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'promptloom-check-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function file(name: string, text: string): string {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}

/** A four-step log: steps 2-4 reuse `shares` of the prompt; step 3 lost reuse at `section`. */
function log(shares: readonly number[], section = 'env'): string {
  const prompt = 'x'.repeat(100)
  const lines = [stepLine(1, { sections: ['env'] }), messageLine(prompt, 'append')]
  shares.forEach((share, i) => {
    const step = i + 2
    const lost = share < 1 ? { cacheBreak: { cause: 'section', section, layer: 'global', variable: 'branch' } } : {}
    lines.push(stepLine(step, { stablePrefixLength: share * 100, stablePrefixBytes: share * 100, sections: ['env'], ...lost }))
  })
  return jsonl(...lines)
}

describe('promptloom check', () => {
  test('passes (exit 0) when every log meets the thresholds, one line per log', () => {
    const a = file('a.jsonl', log([1, 1, 1]))
    const b = file('b.jsonl', log([1, 0.9, 1]))
    expect(cli('check', a, b)).toEqual({
      code: 0,
      stdout: [
        'promptloom check: 2 logs, min reusable 90.0%, max breaks unlimited',
        `ok    ${a}: reusable 100.0% over 3 steps, 0 cache breaks`,
        `ok    ${b}: reusable 96.7% over 3 steps, 1 cache break`,
        'passed: 2 logs',
        '',
      ].join('\n'),
      stderr: '',
    })
  })

  test('fails (exit 1) below --min-reusable, listing the failing log with its figures and each break', () => {
    const a = file('low.jsonl', log([1, 0.5, 0.6]))
    const { code, stdout } = cli('check', a, '--min-reusable', '0.8')
    expect(code).toBe(1)
    expect(stdout).toBe(
      [
        'promptloom check: 1 log, min reusable 80.0%, max breaks unlimited',
        `FAIL  ${a}: reusable 70.0% over 3 steps (below 80.0%), 2 cache breaks`,
        '        step 3: section "env" (layer global) variable "branch"',
        '        step 4: section "env" (layer global) variable "branch"',
        'failed: 1 of 1 log',
        '',
      ].join('\n'),
    )
  })

  test('passes a log whose mean meets --min-reusable exactly, however the float sum drifts', () => {
    // 30 steps at 9/10 each: the plain mean is 0.8999999999999996.
    const lines = [stepLine(1), messageLine('x'.repeat(10), 'append')]
    for (let step = 2; step <= 31; step++) {
      lines.push(stepLine(step, { stablePrefixLength: 9, stablePrefixBytes: 9 }), messageLine(`xxxxxxxxx${step % 10}`))
    }
    const a = file('exact.jsonl', jsonl(...lines))
    const run = cli('check', a, '--min-reusable', '0.9')
    expect([run.code, run.stdout]).toEqual([0, expect.stringContaining(`ok    ${a}: reusable 90.0% over 30 steps`)])
  })

  test('a failing share is shown rounded down, never as the threshold it misses', () => {
    const text = 'x'.repeat(10_000)
    const reusing = (n: number): string =>
      jsonl(stepLine(1), messageLine(text, 'append'), stepLine(2, { stablePrefixLength: n, stablePrefixBytes: n }))
    const a = file('just-below.jsonl', reusing(8996))
    const run = cli('check', a)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`FAIL  ${a}: reusable 89.9% over 1 step (below 90.0%), 0 cache breaks`)
    const b = file('off-grid.jsonl', reusing(8994))
    expect(cli('check', b, '--min-reusable', '0.8995').stdout).toContain(': reusable 89.9% over 1 step (below 90.0%), ')
  })

  test('fails over --max-breaks even with a high reusable share', () => {
    const a = file('breaks.jsonl', log([0.99, 0.99, 0.99]))
    const run = cli('check', '--max-breaks', '2', a)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`FAIL  ${a}: reusable 99.0% over 3 steps, 3 cache breaks (over 2)`)
    expect(cli('check', '--max-breaks', '3', a).code).toBe(0)
  })

  test('a log with one step has nothing to measure and passes', () => {
    const a = file('one.jsonl', jsonl(stepLine(1), messageLine('p', 'append')))
    expect(cli('check', a).stdout).toContain(`ok    ${a}: no step after the first, 0 cache breaks`)
  })

  test('control characters from the log are shown as escapes', () => {
    const a = file('evil.jsonl', log([0.5], 'env\u001b]52;c;AAAA\u0007'))
    const { stdout } = cli('check', a)
    expect(stdout).toContain('step 2: section "env\\x1b]52;c;AAAA\\x07" (layer global)')
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
  })

  test.each([
    [['check'], 'check needs at least one session log'],
    [['check', 'a.jsonl', '--min-reusable', 'most'], '--min-reusable must be a number from 0 to 1, such as 0.9 (got "most")'],
    [['check', 'a.jsonl', '--min-reusable', '1.5'], '--min-reusable must be a number from 0 to 1, such as 0.9 (got "1.5")'],
    [['check', 'a.jsonl', '--max-breaks', '1.5'], '--max-breaks must be a non-negative integer (got "1.5")'],
    [['check', 'a.jsonl', '--max-breaks=-1'], '--max-breaks must be a non-negative integer (got "-1")'],
    [['check', 'a.jsonl', '-o', 'x.html'], 'check prints to the terminal and takes no -o'],
    [['check', 'a.jsonl', '--strict'], "Unknown option '--strict'"],
    // Options before the command: the command is still check.
    [['--max-breaks', '1.5', 'check', 'a.jsonl'], '--max-breaks must be a non-negative integer (got "1.5")'],
    [['--min-reusable', 'most', 'check', 'a.jsonl'], '--min-reusable must be a number from 0 to 1, such as 0.9 (got "most")'],
    [['--strict', 'check', 'a.jsonl'], "Unknown option '--strict'"],
  ])('bad arguments %j exit 2 with the reason and a usage line', (argv, reason) => {
    const run = cli(...argv)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`promptloom: ${reason}`)
    expect(run.stderr).toMatch(/usage: promptloom check <log\.jsonl…> \[--min-reusable F\] \[--max-breaks N\]\n$/)
    expect(run.stdout).toBe('')
  })

  test('a log it cannot read exits 2 (could not check), not 1 (checked and failed)', () => {
    expect(cli('check', join(tmp, 'missing.jsonl')).code).toBe(2)
    expect(cli('--max-breaks', '3', 'check', join(tmp, 'missing.jsonl')).code).toBe(2)
    expect(cli('check', file('torn.jsonl', '{"type":"step"\nnot json\n')).code).toBe(2)
  })

  test('an unexpected error while checking is one promptloom: line and exit 2, not 1 (checked and failed)', () => {
    // JSON.parse reads a value nested 200,000 deep; JSON.stringify overflows the stack on it.
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    const header = `{"type":"request/header","config":{"a":${deep}},"tools":[],"reason":"initial"}`
    const config = file('deep-config.jsonl', jsonl(stepLine(1), header, stepLine(2), headerLine([], 'config', { a: 1 })))
    const run = cli('check', config)
    expect([run.code, run.stdout]).toEqual([2, ''])
    expect(run.stderr).toMatch(/^promptloom: check could not finish: RangeError: [^\n]*\n$/)
  })

  test('a deeply nested bad field is reported as a bad log, naming the line and field', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    const step = file('deep-step.jsonl', `{"type":"step","step":${deep},"compacted":false}\n`)
    const rule = 'a "step" record\'s "step" must be a positive integer (got a value too deeply nested or cyclic to show)'
    expect(cli('check', step)).toEqual({ code: 2, stdout: '', stderr: `promptloom: session log "${step}" line 1: ${rule}\n` })
  })

  test('the check options belong to check alone', () => {
    const run = cli('inspect', file('i.jsonl', log([1])), '--max-breaks', '1')
    expect([run.code, run.stderr]).toEqual([1, 'promptloom: --max-breaks belongs to "promptloom check"; inspect takes no --max-breaks\n'])
  })
})

function bin(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    )
  })
}

describe('promptloom check end to end (the bin, on logs written by the library)', () => {
  let demoLogs: string[]
  beforeAll(async () => {
    const run = await bin([join('examples', 'agent-harness.ts'), '--log', join(tmp, 'demo', 'session.jsonl')])
    expect(run.code).toBe(0)
    demoLogs = ['agent-1', 'agent-2', 'agent-3'].map((agent) => join(tmp, 'demo', `session.${agent}.jsonl`))
  }, 120_000)

  test("the demo's logs pass the gate its scripted session is held to", async () => {
    const run = await bin([join('src', 'cli', 'main.ts'), 'check', ...demoLogs, '--min-reusable', '0.75', '--max-breaks', '5'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^passed: 3 logs$/m)
  })

  test('a deliberately unstable registry (a clock in a section) fails, naming the section, its layer and the variable', async () => {
    const root = await mount(BARE)
    const clock = signal('10:00:00')
    root.systemPrompt.section({ name: 'intro', order: 0, text: 'You are Loom, a coding agent. Plan first, then act.' })
    root.systemPrompt.section({ name: 'status', order: 10, text: 'Local time {{time}}.' })
    root.systemPrompt.section({ name: 'rules', order: 20, text: 'Never push to main. Run the tests before you commit.' })
    root.systemPrompt.variable('time', clock)
    const path = join(tmp, 'unstable.jsonl')
    const writer = createSessionLogWriter(path, { truncate: true })
    const surface = createStepSurface()
    for (let step = 1; step <= 5; step++) {
      clock.value = `10:00:0${step}`
      writer.write(surface.step({ assembly: await root.systemPrompt.assemble(), config: { model: 'm' } }))
    }
    const run = await bin([join('src', 'cli', 'main.ts'), 'check', path, ...demoLogs.slice(0, 1), '--min-reusable', '0.75'])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`FAIL  ${path}: reusable `)
    expect(run.stdout).toContain('        step 2: section "status" (layer global) variable "time"')
    expect(run.stdout).toContain('        step 5: section "status" (layer global) variable "time"')
    expect(run.stdout).toMatch(/^ok {4}.*session\.agent-1\.jsonl: /m)
    expect(run.stdout).toMatch(/^failed: 1 of 2 logs$/m)
  })
})
