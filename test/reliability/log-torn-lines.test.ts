import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { runCli } from '../../src/cli/run.js'
import { createStepSurface, parseSessionLog, serializeStep, SessionLogError, type PromptAssembly, type StepSurface } from '../../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../../src/node.js'
import { jsonl, messageLine, stepLine, usageLine } from '../cli/fixtures.js'

// A process that dies mid-write leaves its last record cut short; the log
// must stay readable, and a writer that resumes it must not make it worse.

const dir = mkdtempSync(join(tmpdir(), 'promptloom-torn-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = (): string => join(dir, `log-${files++}.jsonl`)

function assembly(text: string): Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'> {
  return { sections: [{ name: 'a', order: 0, text }], contexts: [], variables: {}, tools: [] }
}

/** Writes `texts` as steps of `surface` to `path` through a writer that appends (resumes). */
function steps(path: string, surface: StepSurface, texts: readonly string[]): void {
  const writer = createSessionLogWriter(path)
  for (const text of texts) writer.write(surface.step({ assembly: assembly(text) }))
}

/**
 * Appends the first `keep` characters of the next step's lines, as a process
 * killed mid-write would, and returns the torn line's number.
 */
function crashWhileWriting(path: string, surface: StepSurface, text: string, keep: number): number {
  const lines = serializeStep(surface.step({ assembly: assembly(text) }))
  const torn = lines.slice(0, keep)
  expect(torn.includes('\n')).toBe(false)
  const line = readFileSync(path, 'utf8').split('\n').length
  appendFileSync(path, torn)
  return line
}

const cli = (...argv: string[]): { code: number; stdout: string; stderr: string } => {
  let stdout = ''
  let stderr = ''
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } })
  return { code, stdout, stderr }
}

describe('a writer that resumes a log', () => {
  test('whose last line is torn starts on a new line, and the reader skips that one line with a warning', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one', 'two'])
    const tornLine = crashWhileWriting(path, createStepSurface(), 'lost', 25)
    const torn = readFileSync(path, 'utf8').split('\n')[tornLine - 1]!
    steps(path, createStepSurface(), ['three', 'four'])
    // The torn record stays alone on its line: the resumed writer's first record is whole on the next.
    expect(readFileSync(path, 'utf8').split('\n')[tornLine - 1]).toBe(torn)
    const { steps: replayed, warnings } = readSessionLog(path)
    expect(replayed.map((step) => [step.session, step.step, step.prompt])).toEqual([
      [1, 1, 'one'],
      [1, 2, 'two'],
      [2, 1, 'three'],
      [2, 2, 'four'],
    ])
    expect(warnings).toEqual([
      {
        kind: 'torn-line',
        source: path,
        line: tornLine,
        message: `session log "${path}" line ${tornLine}: skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept`,
      },
    ])
  })

  test('that ends with a line break appends nothing before its first record', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one'])
    const before = readFileSync(path, 'utf8')
    createSessionLogWriter(path)
    expect(readFileSync(path, 'utf8')).toBe(before)
  })

  test('whose last record lost only its line break keeps that record whole, without a warning', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one'])
    writeFileSync(path, readFileSync(path, 'utf8').replace(/\n$/, ''))
    steps(path, createStepSurface(), ['two'])
    const { steps: replayed, warnings } = readSessionLog(path)
    expect([replayed.map((step) => step.prompt), warnings]).toEqual([['one', 'two'], []])
  })
})

describe('the reader', () => {
  test('skips a torn last line with a warning and keeps every complete record before it', () => {
    const path = fresh()
    const surface = createStepSurface()
    steps(path, surface, ['one', 'two'])
    const torn = crashWhileWriting(path, surface, 'three', 40)
    const { steps: replayed, warnings } = readSessionLog(path)
    expect(replayed.map((step) => step.prompt)).toEqual(['one', 'two'])
    expect(warnings.map((warning) => [warning.kind, warning.line])).toEqual([['torn-line', torn]])
  })

  test('keeps the step record that an earlier writer glued to the end of a torn line', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one'])
    const torn = crashWhileWriting(path, createStepSurface(), 'lost', 30)
    // What a writer that did not start a new line left behind: its first record on the torn line.
    appendFileSync(path, serializeStep(createStepSurface().step({ assembly: assembly('two') })))
    const { steps: replayed, warnings } = readSessionLog(path)
    expect(replayed.map((step) => [step.session, step.prompt])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ])
    expect(warnings[0]!.message).toBe(
      `session log "${path}" line ${torn}: skipped the torn start of the line (a record cut short when the writing process stopped) and kept the step record a resumed writer appended to it`,
    )
  })

  test('treats a torn line in the middle of the log like a final one when a step record follows it', () => {
    const text = jsonl(stepLine(1), messageLine('one', 'append'), '{"type":"system/mess', stepLine(1), messageLine('two', 'append'))
    const replay = parseSessionLog(text, 'a.jsonl')
    expect(replay.steps.map((step) => step.prompt)).toEqual(['one', 'two'])
    expect(replay.warnings.map((warning) => warning.line)).toEqual([3])
  })

  test('skips a torn line per crash: every one that a step record or the end follows', () => {
    const text = jsonl(stepLine(1), '{"type":"sys', stepLine(1), messageLine('two', 'append'), '{"type":"st')
    const replay = parseSessionLog(text, 'a.jsonl')
    expect(replay.steps.map((step) => step.prompt)).toEqual(['', 'two'])
    expect(replay.warnings.map((warning) => warning.line)).toEqual([2, 5])
  })

  test('a log its writers resumed after three crashes keeps every complete step, in the library and the CLI', () => {
    const path = fresh()
    const torn: number[] = []
    for (const [i, text] of ['one', 'two', 'three'].entries()) {
      steps(path, createStepSurface(), [text])
      torn.push(crashWhileWriting(path, createStepSurface(), `lost ${i}`, 20))
    }
    steps(path, createStepSurface(), ['four'])
    const { steps: replayed, warnings } = readSessionLog(path)
    expect(replayed.map((step) => step.prompt)).toEqual(['one', 'two', 'three', 'four'])
    expect(warnings.map((warning) => warning.line)).toEqual(torn)
    const run = cli('inspect', path)
    expect(run.code).toBe(0)
    expect(run.stderr.split('\n').filter((line) => line.includes('skipped a torn line'))).toHaveLength(3)
  })

  test('skips two torn lines in a row: a resumed writer that died during its first write', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one'])
    const first = crashWhileWriting(path, createStepSurface(), 'lost', 30)
    createSessionLogWriter(path)
    const second = crashWhileWriting(path, createStepSurface(), 'lost again', 25)
    steps(path, createStepSurface(), ['two'])
    const { steps: replayed, warnings } = readSessionLog(path)
    expect(replayed.map((step) => [step.session, step.prompt])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ])
    expect(warnings.map((warning) => warning.line)).toEqual([first, second])
    expect(cli('check', path, '--min-reusable', '0').code).toBe(0)
  })

  test('skips a torn line before one cut so short it is only the start of a step record', () => {
    const replay = parseSessionLog(jsonl(stepLine(1), '{"type":"sys', '{"ty', stepLine(1)), 'a.jsonl')
    expect([replay.steps.length, replay.warnings.map((warning) => warning.line)]).toEqual([2, [2, 3]])
  })

  test('rejects a line that is not JSON before another that cannot start a step record', () => {
    expect(() => parseSessionLog(jsonl(stepLine(1), '{"type":"sys', '{"type":"usage', stepLine(1)), 'a.jsonl')).toThrow(/line 2: not JSON/)
  })

  test('rejects a line that is not JSON when the record after it does not start a step (damage, not a crash)', () => {
    const text = jsonl(stepLine(1), '{"type":"sys', usageLine(1, 10, 0))
    expect(() => parseSessionLog(text, 'a.jsonl')).toThrow(
      /^session log "a\.jsonl" line 2: not JSON .* \(a line cut short by a crash is skipped only as the last line of the log or right before the step record of a writer that resumed it\)$/,
    )
  })

  test('never takes a line that does not start like a record for a torn one', () => {
    expect(() => parseSessionLog(jsonl(stepLine(1), 'garbage'), 'a.jsonl')).toThrow(SessionLogError)
  })

  test('a log that is only a torn line replays to no steps, with the warning', () => {
    expect(parseSessionLog('{"type":"ste')).toEqual({
      steps: [],
      warnings: [{ kind: 'torn-line', line: 1, message: 'session log line 1: skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept' }],
    })
  })
})

describe('the CLI on a log with a torn line', () => {
  test('inspect prints the warning on stderr and a row for every complete step', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one', 'two'])
    const torn = crashWhileWriting(path, createStepSurface(), 'lost', 20)
    steps(path, createStepSurface(), ['three'])
    const run = cli('inspect', path)
    expect(run.code).toBe(0)
    expect(run.stderr).toBe(`promptloom: warning: session log "${path}" line ${torn}: skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept\n`)
    expect(run.stdout.split('\n').filter((line) => /^ +\d+ /.test(line))).toHaveLength(3)
  })

  test('report prints the warning, writes every complete step and names the damage in the page', () => {
    const path = fresh()
    steps(path, createStepSurface(), ['one', 'two'])
    const torn = crashWhileWriting(path, createStepSurface(), 'lost', 20)
    const out = join(dir, 'torn.html')
    const run = cli('report', path, '-o', out)
    expect([run.code, run.stderr]).toEqual([0, `promptloom: warning: session log "${path}" line ${torn}: skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept\n`])
    const page = readFileSync(out, 'utf8')
    expect(page.match(/<tr class="step-row/g)).toHaveLength(2)
    expect(page).toContain(`line ${torn}: skipped a torn line`)
  })
})
