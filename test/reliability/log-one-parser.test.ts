import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { agentNameOf, readAgentLog } from '../../src/cli/run.js'
import { agentModel } from '../../src/cli/report-model.js'
import { createStepSurface, parseSessionLog, SessionLogError, type PromptAssembly } from '../../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../../src/node.js'
import { cli, headerLine, jsonl, messageLine, stepLine, threeStepLog, usageLine } from '../cli/fixtures.js'

// The library's reader and the CLI read a log with one parser: they accept
// the same logs, reject the same logs with the same message, and the CLI's
// rows are built from the library's replay.

const dir = mkdtempSync(join(tmpdir(), 'promptloom-one-parser-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
function file(text: string, name = `log-${files++}.jsonl`): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

function assembly(sections: Record<string, string>): Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'> {
  return { sections: Object.entries(sections).map(([name, text], order) => ({ name, order, text })), contexts: [], variables: {}, tools: [] }
}

describe('logs both readers accept', () => {
  test('fractional token counts, as a surface with an estimating countTokens writes them', () => {
    const path = join(dir, 'fractional.jsonl')
    const surface = createStepSurface({ countTokens: (text) => text.length * 0.1 })
    const writer = createSessionLogWriter(path, { truncate: true })
    writer.write(surface.step({ assembly: assembly({ a: 'Alpha beta', b: 'one' }) }))
    writer.writeUsage(surface.observeUsage({ inputTokens: 10.5, cachedInputTokens: 0.25 }))
    writer.write(surface.step({ assembly: assembly({ a: 'Alpha beta', b: 'two' }) }))
    const { steps } = readSessionLog(path)
    expect(steps.map((step) => step.promptTokens)).toEqual([1.5, 1.5])
    expect(steps[0]!.usage).toMatchObject({ inputTokens: 10.5, cachedInputTokens: 0.25 })
    const run = cli('inspect', path)
    expect([run.code, run.stderr]).toEqual([0, ''])
    expect(run.stdout).toContain('0.25/10.5')
  })

  test('a UTF-8 BOM, CRLF line ends and blank lines', () => {
    const text = '\uFEFF' + [stepLine(1), messageLine('p', 'append'), '', '   ', stepLine(2, { stablePrefixLength: 1 }), usageLine(2, 10, 5), ''].join('\r\n')
    const path = file(text)
    const { steps } = readSessionLog(path)
    expect(steps.map((step) => [step.step, step.prompt, step.usage?.cachedInputTokens])).toEqual([
      [1, 'p', undefined],
      [2, 'p', 5],
    ])
    expect(parseSessionLog(text).steps).toEqual(steps)
    expect(agentModel(readAgentLog(path)).rows.map((row) => [row.step, row.promptLength, row.usage?.cachedInputTokens])).toEqual([
      [1, 1, undefined],
      [2, 1, 5],
    ])
  })

  test('fields a newer writer added, which both ignore', () => {
    const text = jsonl(stepLine(1, { futureSummary: { cause: 'tools' } }), messageLine('p', 'append'), usageLine(1, 10, 5, { futureTokens: 4, region: 'eu' }))
    const path = file(text)
    expect(readSessionLog(path).steps[0]!.usage).toEqual({ type: 'usage', step: 1, inputTokens: 10, cachedInputTokens: 5 })
    expect(cli('inspect', path).code).toBe(0)
  })
})

describe('restarted step numbers: a new surface appending to the same file', () => {
  function restartedLog(): string {
    const path = join(dir, 'restarted.jsonl')
    let surface = createStepSurface({ countTokens: (text) => text.length })
    let writer = createSessionLogWriter(path, { truncate: true })
    writer.write(surface.step({ assembly: assembly({ a: 'first run' }) }))
    writer.writeUsage(surface.observeUsage({ inputTokens: 100, cachedInputTokens: 0 }))
    writer.write(surface.step({ assembly: assembly({ a: 'first run' }) }))
    writer.writeUsage(surface.observeUsage({ inputTokens: 100, cachedInputTokens: 90 }))
    // The process restarts: a new surface, a writer that resumes the file.
    surface = createStepSurface({ countTokens: (text) => text.length })
    writer = createSessionLogWriter(path)
    writer.write(surface.step({ assembly: assembly({ a: 'second run' }) }))
    writer.writeUsage(surface.observeUsage({ inputTokens: 50, cachedInputTokens: 1 }))
    writer.write(surface.step({ assembly: assembly({ a: 'second run' }) }))
    return path
  }

  test('each usage record attaches to the step of its own session', () => {
    const { steps } = readSessionLog(restartedLog())
    expect(steps.map((step) => [step.step, step.prompt, step.usage?.inputTokens, step.usage?.cachedInputTokens])).toEqual([
      [1, 'first run', 100, 0],
      [2, 'first run', 100, 90],
      [1, 'second run', 50, 1],
      [2, 'second run', undefined, undefined],
    ])
    expect(steps.map((step) => step.session)).toEqual([1, 1, 2, 2])
  })

  test('the CLI rows carry the same usage, and a new session starts over as a first step', () => {
    const rows = agentModel(readAgentLog(restartedLog())).rows
    expect(rows.map((row) => [row.step, row.first, row.usage?.inputTokens])).toEqual([
      [1, true, 100],
      [2, false, 100],
      [1, true, 50],
      [2, false, undefined],
    ])
    expect(rows.map((row) => row.session)).toEqual([1, 1, 2, 2])
  })

  test('a session starts from nothing: tools, config and in-history messages of the previous one are gone', () => {
    const text = jsonl(
      stepLine(1),
      messageLine('old', 'append', 0),
      headerLine(['read'], 'initial'),
      stepLine(2),
      messageLine('old 2', 'append', 4),
      stepLine(1),
      messageLine('new', 'append', 0),
    )
    const last = parseSessionLog(text).steps[2]!
    expect([last.session, last.prompt, last.systemMessages, last.tools, last.config]).toEqual([2, 'new', [{ node: 0, text: 'new' }], [], {}])
  })

  test("a usage record for a step only the previous session had is an error naming the session's first line", () => {
    const text = jsonl(stepLine(1), stepLine(2), stepLine(3), stepLine(1), usageLine(3, 1, 0))
    expect(() => parseSessionLog(text)).toThrow(
      'session log line 5: usage for step 3 has no step record before it in the session that starts at line 4 (a step number at or below the previous one starts a new session); write the step, then its usage',
    )
  })
})

describe('logs both readers reject, with the same message', () => {
  const bad: readonly (readonly [string, string])[] = [
    ['a line that is not JSON before an event', jsonl(stepLine(1), '{oops', messageLine('p'))],
    ['a line that is not an object', jsonl(stepLine(1), '"step"')],
    ['an unknown record type', jsonl(stepLine(1), '{"type":"note"}')],
    ['a fractional step number', jsonl(stepLine(1.5))],
    ['a fractional node', jsonl(stepLine(1), messageLine('p', 'append', 0.5))],
    ['a negative token count', jsonl(stepLine(1, { promptTokens: -1 }))],
    ['an infinite token count written as a huge number', jsonl(stepLine(1)).replace('"changedSections"', '"promptTokens":1e999,"changedSections"')],
    ['a usage record before its step', jsonl(stepLine(1), usageLine(2, 1, 0))],
    ['an event before the first step', jsonl(messageLine('p'), stepLine(1))],
    ['a warning without a message', jsonl(stepLine(1, { warnings: [{ kind: 'x' }] }))],
  ]

  test.each(bad)('%s', (_, text) => {
    const path = file(text)
    let library = ''
    try {
      readSessionLog(path)
    } catch (error) {
      expect(error).toBeInstanceOf(SessionLogError)
      library = (error as Error).message
    }
    expect(library).toMatch(new RegExp(`^session log "${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" line \\d+: `))
    for (const command of ['inspect', 'report']) {
      const run = cli(command, path, ...(command === 'report' ? ['-o', join(dir, 'never.html')] : []))
      expect([run.code, run.stderr]).toEqual([1, `promptloom: ${library}\n`])
    }
  })
})

describe('the CLI reads through the library', () => {
  test('the agent is named after the file without .jsonl', () => {
    expect([agentNameOf('logs/session.agent-2.jsonl'), agentNameOf('/x/y/run.JSONL')]).toEqual(['session.agent-2', 'run'])
  })

  test("a row's prompt and figures are the library's replayed step", () => {
    const path = file(threeStepLog())
    const { steps } = readSessionLog(path)
    const rows = agentModel(readAgentLog(path)).rows
    expect(rows.map((row) => [row.step, row.promptLength, row.stablePrefixLength, row.reusablePrefixLength])).toEqual(
      steps.map((step) => [step.step, step.prompt.length, step.stablePrefixLength, step.reusablePrefixLength]),
    )
    expect(readFileSync(path, 'utf8')).toBe(threeStepLog())
  })
})
