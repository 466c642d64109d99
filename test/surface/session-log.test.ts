import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createStepSurface,
  parseSessionLog,
  serializeStep,
  SessionLogError,
  type PromptAssembly,
  type ReplayedStep,
  type StepInput,
  type StepSurfaceOptions,
  type ToolSchema,
} from '../../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../../src/node.js'
import { BARE, mintScope, mount, tool } from '../assembly/system-prompt.fixtures.js'
import { headerLine, jsonl, messageLine, stepLine, threeStepLog, usageLine } from '../cli/fixtures.js'

type Plain = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

function plain(sections: readonly (readonly [string, string])[], tools: ToolSchema[] = [], contexts: readonly (readonly [string, string])[] = []): Plain {
  return {
    sections: sections.map(([name, text], order) => ({ name, order, text })),
    contexts: contexts.map(([name, text]) => ({ name, text })),
    variables: {},
    tools,
  }
}

let dir: string
let path: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'promptloom-log-'))
  path = join(dir, 'session.jsonl')
})

afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

function record(inputs: readonly StepInput[], options?: StepSurfaceOptions): void {
  const surface = createStepSurface(options)
  const log = createSessionLogWriter(path)
  for (const input of inputs) log.write(surface.step(input))
}

describe('writer', () => {
  test('each step is a step record followed by its events, one JSON object per line', () => {
    record([{ assembly: plain([['a', 'Alpha']], [tool('bash')]), config: { model: 'm1' } }])
    const lines = readFileSync(path, 'utf8').split('\n')
    expect(lines.at(-1)).toBe('')
    expect(lines.slice(0, -1).map((line) => JSON.parse(line).type)).toEqual(['step', 'system/message', 'request/header'])
    expect(JSON.parse(lines[0]!)).toEqual({
      type: 'step',
      step: 1,
      compacted: false,
      stablePrefixLength: 0,
      stablePrefixBytes: 0,
      changedSections: ['a'],
      firstChangedSection: 'a',
      warnings: [],
      toolsChanged: false,
      configChanged: false,
      reusablePrefixLength: 0,
      reusablePrefixBytes: 0,
      sections: ['a'],
      sectionLengths: [5],
      sectionLayers: [null],
    })
  })

  test('a step is on disk when write returns (flushed per step)', () => {
    const surface = createStepSurface()
    const log = createSessionLogWriter(path)
    const first = surface.step({ assembly: plain([['a', 'Alpha']]) })
    log.write(first)
    expect(readFileSync(path, 'utf8')).toBe(serializeStep(first))
    const before = readFileSync(path, 'utf8')
    log.write(surface.step({ assembly: plain([['a', 'Beta']]) }))
    const after = readFileSync(path, 'utf8')
    expect(after.startsWith(before)).toBe(true)
    expect(after.slice(before.length).split('\n').filter(Boolean).map((line) => JSON.parse(line).type)).toEqual([
      'step',
      'system/message',
    ])
  })

  test('the writer appends to an existing file unless asked to truncate it', () => {
    writeFileSync(path, '')
    record([{ assembly: plain([['a', 'Alpha']]) }])
    record([{ assembly: plain([['a', 'Alpha']]) }])
    expect(readSessionLog(path).steps).toHaveLength(2)
    createSessionLogWriter(path, { truncate: true })
    expect(readFileSync(path, 'utf8')).toBe('')
  })

  test('a writer made with a relative path keeps writing the file it opened after process.chdir', () => {
    const cwd = process.cwd()
    mkdirSync(join(dir, 'workspace'))
    process.chdir(dir)
    try {
      const log = createSessionLogWriter('relative.jsonl', { truncate: true })
      expect(log.path).toBe(join(dir, 'relative.jsonl'))
      const surface = createStepSurface()
      log.write(surface.step({ assembly: plain([['a', 'Alpha']]) }))
      process.chdir(join(dir, 'workspace'))
      log.write(surface.step({ assembly: plain([['a', 'Alpha']]) }))
      log.writeUsage(surface.observeUsage({ inputTokens: 1, cachedInputTokens: 0 }))
    } finally {
      process.chdir(cwd)
    }
    expect(readSessionLog(join(dir, 'relative.jsonl')).steps.map((step) => [step.step, step.usage?.inputTokens])).toEqual([
      [1, undefined],
      [2, 1],
    ])
    expect(existsSync(join(dir, 'workspace', 'relative.jsonl'))).toBe(false)
  })

  test('a step reads the scope key only to label a warning it reports or a record it writes', async () => {
    const app = await mount(BARE)
    let reads = 0
    const key = new Proxy({ name: 'agent-1' }, { get: (target, property) => (reads++, Reflect.get(target, property)) })
    const agent = await mintScope(app, key)
    agent.ctx.systemPrompt.section({ name: 'plain', order: 0, text: 'Plain.' })
    const surface = createStepSurface()
    surface.step({ assembly: await app.systemPrompt.assemble({ scope: key }) })
    expect(reads).toBe(0)
    agent.ctx.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    expect(surface.step({ assembly: await app.systemPrompt.assemble({ scope: key }) }).warnings).toHaveLength(1)
    const labelled = reads
    const again = surface.step({ assembly: await app.systemPrompt.assemble({ scope: key }) })
    expect(again.warnings).toEqual([])
    expect(reads).toBe(labelled)
    createSessionLogWriter(path).write(again)
    expect(readSessionLog(path).steps[0]!.sectionLayers).toContain('agent-1')
  })

  test('a warning is logged with its layer as a label, never the scope key object', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1', secret: { huge: 'x'.repeat(100) } }
    const agent = await mintScope(app, key)
    agent.ctx.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    record([{ assembly: await app.systemPrompt.assemble({ scope: key }) }])
    const [step] = readSessionLog(path).steps
    expect(step!.warnings).toEqual([
      { kind: 'volatile-variable', section: 'clock', layer: 'agent-1', variable: 'now', message: expect.any(String) },
    ])
    expect(readFileSync(path, 'utf8')).not.toContain('xxxx')
  })
})

describe('reader', () => {
  const replay = (): ReplayedStep[] => readSessionLog(path).steps

  test('replays replace-mode system messages into the prompt of every step', () => {
    record([
      { assembly: plain([['a', 'Alpha']]) },
      { assembly: plain([['a', 'Alpha']]) },
      { assembly: plain([['a', 'Beta']]) },
    ])
    const steps = replay()
    expect(steps.map((step) => step.prompt)).toEqual(['Alpha', 'Alpha', 'Beta'])
    expect(steps.map((step) => step.systemMessages)).toEqual([
      [{ node: 0, text: 'Alpha' }],
      [{ node: 0, text: 'Alpha' }],
      [{ node: 0, text: 'Beta' }],
    ])
  })

  test('replays in-history appends as later system messages, the newest being the prompt', () => {
    record(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', 'Beta']]), historyLength: 3 },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    const [, second] = replay()
    expect(second!.prompt).toBe('Beta')
    expect(second!.systemMessages).toEqual([
      { node: 0, text: 'Alpha' },
      { node: 3, text: 'Beta' },
    ])
  })

  test('each step keeps the system messages it saw, even when a later step rewrites a lower node', () => {
    const text = jsonl(
      stepLine(1),
      messageLine('v0', 'append', 0),
      stepLine(2),
      messageLine('v5', 'append', 5),
      stepLine(3),
      messageLine('v3', 'append', 3),
      stepLine(4),
      messageLine('v5b', 'append', 5),
      stepLine(5),
      messageLine('v0b', 'replace', 0),
    )
    const steps = parseSessionLog(text).steps
    expect(steps.map((step) => step.systemMessages.map((m) => `${m.node}:${m.text}`).join(' '))).toEqual([
      '0:v0',
      '0:v0 5:v5',
      '0:v0 3:v3 5:v5',
      '0:v0 3:v3 5:v5b',
      '0:v0b 3:v3 5:v5b',
    ])
  })

  test('a replayed step copies like a plain object: spread, structuredClone and JSON keep its system messages', () => {
    const [step] = parseSessionLog(jsonl(stepLine(1), messageLine('v0', 'append', 0), messageLine('v4', 'append', 4))).steps
    const messages = [
      { node: 0, text: 'v0' },
      { node: 4, text: 'v4' },
    ]
    expect([{ ...step! }.systemMessages, structuredClone(step!).systemMessages, JSON.parse(JSON.stringify(step)).systemMessages]).toEqual([messages, messages, messages])
    expect(step!.systemMessages).toBe(step!.systemMessages)
  })

  test('a replayed step frozen before its system messages are read still reads them', () => {
    const [step] = parseSessionLog(jsonl(stepLine(1), messageLine('v0', 'append', 0))).steps
    expect(Object.freeze(step!).systemMessages).toEqual([{ node: 0, text: 'v0' }])
  })

  test('a compacted step drops in-history system messages and the snapshot before its own events', () => {
    record(
      [
        { assembly: plain([['a', 'Alpha']], [], [['cwd', 'cwd: /a']]), historyLength: 0 },
        { assembly: plain([['a', 'Beta']], [], [['cwd', 'cwd: /a']]), historyLength: 3 },
        { assembly: plain([['a', 'Alpha']], [], []), historyLength: 1, compacted: true },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    const [, second, third] = replay()
    expect(second!.contextSnapshot).toContain('cwd: /a')
    expect(third).toMatchObject({ compacted: true, prompt: 'Alpha', systemMessages: [{ node: 0, text: 'Alpha' }], contextSnapshot: '' })
  })

  test('tools and config come from the latest request/header', () => {
    record([
      { assembly: plain([], [tool('bash')]), config: { model: 'm1' } },
      { assembly: plain([['a', 'changed']], [tool('bash')]), config: { model: 'm1' } },
      { assembly: plain([['a', 'changed']], [tool('bash'), tool('grep')]), config: { model: 'm2' } },
    ])
    const steps = replay()
    expect(steps.map((step) => step.tools.map((t) => t.name))).toEqual([['bash'], ['bash'], ['bash', 'grep']])
    expect(steps.map((step) => step.config)).toEqual([{ model: 'm1' }, { model: 'm1' }, { model: 'm2' }])
    expect(steps[2]!.tools[1]).toEqual(tool('grep'))
  })

  test('each replayed step carries its events, prefix report and sent section names', () => {
    record([{ assembly: plain([['a', 'Alpha'], ['b', 'one']]) }, { assembly: plain([['a', 'Alpha'], ['b', 'two']]) }])
    const [, second] = replay()
    expect(second).toMatchObject({
      step: 2,
      session: 1,
      events: [{ type: 'system/message', op: 'replace', node: 0, text: 'Alpha\n\ntwo' }],
      stablePrefixLength: 'Alpha\n\n'.length,
      stablePrefixBytes: 7,
      changedSections: ['b'],
      firstChangedSection: 'b',
      sections: ['a', 'b'],
    })
  })

  test('a step without events keeps the previous prompt, tools and config', () => {
    const steps = parseSessionLog(threeStepLog()).steps
    expect(steps[1]).toMatchObject({ events: [], prompt: steps[0]!.prompt, tools: steps[0]!.tools, config: steps[0]!.config })
  })

  test('a context snapshot event keeps its section names and texts', () => {
    const text = jsonl(stepLine(1), JSON.stringify({ type: 'context/snapshot', text: 'x', sections: [{ name: 'clock', text: 'x' }] }))
    expect(parseSessionLog(text).steps[0]!.events).toEqual([{ type: 'context/snapshot', text: 'x', sections: [{ name: 'clock', text: 'x' }] }])
  })

  test('text with newlines, separators and astral characters survives the round trip', () => {
    const text = 'line 1\nline 2\u2028\u2029 😀 "quoted" \\ back'
    record([{ assembly: plain([['a', text]]) }])
    expect(replay()[0]!.prompt).toBe(text)
  })

  test('an empty log replays to no steps', () => {
    expect(parseSessionLog('')).toEqual({ steps: [], warnings: [] })
  })

  test('the newer step fields are read when present', () => {
    const text = jsonl(
      stepLine(1, {
        reusablePrefixLength: 0,
        reusablePrefixBytes: 0,
        toolsChanged: false,
        configChanged: false,
        promptTokens: 90,
        stablePrefixTokens: 0,
        withheld: ['examples'],
        overBudget: true,
        sections: ['identity'],
      }),
      messageLine('p', 'append'),
    )
    const step = parseSessionLog(text).steps[0]!
    expect([step.promptTokens, step.stablePrefixTokens, step.withheld, step.overBudget, step.toolsChanged, step.sections]).toEqual([
      90,
      0,
      ['examples'],
      true,
      false,
      ['identity'],
    ])
  })

  test('a step record of the base format reads without any newer field, and without warnings', () => {
    const base = JSON.stringify({ type: 'step', step: 1, compacted: false, stablePrefixLength: 0, stablePrefixBytes: 0, changedSections: [] })
    const step = parseSessionLog(jsonl(base)).steps[0]!
    expect([step.warnings, step.sections, step.promptTokens, step.usage]).toEqual([[], undefined, undefined, undefined])
  })

  test('fields the reader does not know are left out of the replay', () => {
    const text = jsonl(stepLine(1, { futureField: { x: 1 } }), JSON.stringify({ type: 'system/message', op: 'append', node: 0, text: 'p', seenBy: 'x' }))
    const [step] = parseSessionLog(text).steps
    expect('futureField' in step!).toBe(false)
    expect(step!.events).toEqual([{ type: 'system/message', op: 'append', node: 0, text: 'p' }])
  })
})

describe('reader: a malformed log is an error naming the file and line', () => {
  const FILE = 'logs/a.jsonl'
  const fails = (text: string): string => {
    try {
      parseSessionLog(text, FILE)
    } catch (error) {
      expect(error).toBeInstanceOf(SessionLogError)
      return (error as Error).message
    }
    throw new Error('expected a SessionLogError')
  }

  test('a line that is not JSON (and not the last one)', () => {
    expect(fails(jsonl(stepLine(1), '{oops', messageLine('p')))).toMatch(/^session log "logs\/a\.jsonl" line 2: not JSON \(.+\); each line holds one JSON object/)
  })

  test('the error carries the file and line as fields', () => {
    try {
      parseSessionLog(jsonl(stepLine(1), '[1]'), FILE)
    } catch (error) {
      expect([(error as SessionLogError).source, (error as SessionLogError).line]).toEqual([FILE, 2])
    }
  })

  test('text of unknown origin is named "session log"', () => {
    expect(() => parseSessionLog(jsonl('[1]'))).toThrow(/^session log line 1: expected a JSON object with a "type" \(got \[1\]\)$/)
  })

  test('blank lines still count for the line number', () => {
    expect(fails(`${stepLine(1)}\n\n\n[1,2]\n`)).toBe('session log "logs/a.jsonl" line 4: expected a JSON object with a "type" (got [1,2])')
  })

  test('an unknown record type lists the known ones', () => {
    expect(fails(jsonl(stepLine(1), '{"type":"sytem/message"}'))).toBe(
      'session log "logs/a.jsonl" line 2: unknown record type "sytem/message"; known types: step, system/message, request/header, context/snapshot, usage',
    )
  })

  test('a step field of the wrong type', () => {
    expect(fails(jsonl(stepLine(1, { stablePrefixLength: '12' })))).toBe(
      'session log "logs/a.jsonl" line 1: a "step" record\'s "stablePrefixLength" must be a non-negative integer (got "12")',
    )
  })

  test('a missing required field', () => {
    expect(fails('{"type":"step","step":1,"compacted":false,"changedSections":[]}\n')).toBe(
      'session log "logs/a.jsonl" line 1: a "step" record\'s "stablePrefixLength" must be a non-negative integer (got nothing)',
    )
  })

  test('a newer field, when present, is validated too', () => {
    expect(fails(jsonl(stepLine(1, { withheld: ['a', 3] })))).toBe('session log "logs/a.jsonl" line 1: a "step" record\'s "withheld[1]" must be a string (got 3)')
  })

  test("a budget warning's sections must be strings", () => {
    expect(fails(jsonl(stepLine(1, { warnings: [{ kind: 'withheld', message: 'm', sections: ['a', 1] }] })))).toBe(
      'session log "logs/a.jsonl" line 1: a "step" record\'s "warnings[0].sections[1]" must be a string (got 1)',
    )
  })

  test('an event before the first step record', () => {
    expect(fails(jsonl(messageLine('p', 'append'), stepLine(1)))).toMatch(/^session log "logs\/a\.jsonl" line 1: "system\/message" comes before the first step record/)
  })

  test('a system message with an unknown op', () => {
    expect(fails(jsonl(stepLine(1), JSON.stringify({ type: 'system/message', op: 'insert', node: 0, text: 'x' })))).toBe(
      'session log "logs/a.jsonl" line 2: a "system/message" record\'s "op" must be "append" or "replace" (got "insert")',
    )
  })

  test('a tool without a name', () => {
    expect(fails(jsonl(stepLine(1), JSON.stringify({ type: 'request/header', config: {}, tools: [{ description: 'x' }], reason: 'initial' })))).toBe(
      'session log "logs/a.jsonl" line 2: a "request/header" record\'s "tools[0]" must be an object with a string "name" (got {"description":"x"})',
    )
  })

  test('a header with an array for config', () => {
    expect(fails(jsonl(stepLine(1), headerLine([], 'initial').replace('{"model":"m"}', '[]')))).toBe(
      'session log "logs/a.jsonl" line 2: a "request/header" record\'s "config" must be an object (got [])',
    )
  })

  test('a snapshot section without a text', () => {
    expect(fails(jsonl(stepLine(1), JSON.stringify({ type: 'context/snapshot', text: 'x', sections: [{ name: 'clock' }] })))).toBe(
      'session log "logs/a.jsonl" line 2: a "context/snapshot" record\'s "sections[0].text" must be a string (got nothing)',
    )
  })
})

describe('usage records', () => {
  const countTokens = (text: string): number => text.split(/\s+/).filter(Boolean).length

  test('writeUsage appends the usage record as its own line after the step', () => {
    const surface = createStepSurface({ countTokens })
    const log = createSessionLogWriter(path)
    log.write(surface.step({ assembly: plain([['a', 'one two three']]) }))
    const usage = surface.observeUsage({ inputTokens: 50, cachedInputTokens: 0, cacheWriteTokens: 40 })
    log.writeUsage(usage)
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => line.type)).toEqual(['step', 'system/message', 'request/header', 'usage'])
    expect(lines[3]).toEqual({ type: 'usage', step: 1, inputTokens: 50, cachedInputTokens: 0, cacheWriteTokens: 40, predictedTokens: 0 })
  })

  test('the step record logs the tools/config flags, reusable prefix and token figures', () => {
    const surface = createStepSurface({ countTokens })
    const log = createSessionLogWriter(path)
    log.write(surface.step({ assembly: plain([['a', 'one two'], ['b', 'x']]) }))
    log.write(surface.step({ assembly: plain([['a', 'one two'], ['b', 'y']], [tool('bash')]) }))
    const second = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').filter((line) => line.includes('"type":"step"'))[1]!)
    expect(second).toMatchObject({
      toolsChanged: true,
      configChanged: false,
      stablePrefixLength: 'one two\n\n'.length,
      reusablePrefixLength: 0,
      reusablePrefixBytes: 0,
      stablePrefixTokens: 2,
      reusablePrefixTokens: 0,
      promptTokens: 3,
    })
  })

  test('replay attaches each usage record to its step as usage, with the predicted tokens', () => {
    const surface = createStepSurface({ countTokens })
    const log = createSessionLogWriter(path)
    log.write(surface.step({ assembly: plain([['a', 'one two'], ['b', 'x']]) }))
    log.writeUsage(surface.observeUsage({ inputTokens: 10, cachedInputTokens: 0 }))
    log.write(surface.step({ assembly: plain([['a', 'one two'], ['b', 'y']]) }))
    log.writeUsage(surface.observeUsage({ inputTokens: 12, cachedInputTokens: 8 }))
    log.write(surface.step({ assembly: plain([['a', 'one two'], ['b', 'y']]) }))
    const steps = readSessionLog(path).steps
    expect(steps.map((step) => step.usage)).toEqual([
      { type: 'usage', step: 1, inputTokens: 10, cachedInputTokens: 0, predictedTokens: 0 },
      { type: 'usage', step: 2, inputTokens: 12, cachedInputTokens: 8, predictedTokens: 2 },
      undefined,
    ])
    expect(steps[1]).toMatchObject({ reusablePrefixLength: 'one two\n\n'.length, reusablePrefixTokens: 2, promptTokens: 3 })
    // A usage line is not one of the step's surface events.
    expect(steps[1]!.events.map((event) => event.type)).toEqual(['system/message'])
  })

  test('a usage record for a step that has no step record before it is an error naming the line', () => {
    expect(() => parseSessionLog(jsonl(stepLine(1), usageLine(2, 1, 0)))).toThrow(/^session log line 2: usage for step 2 has no step record before it; write the step, then its usage$/)
  })

  test('a usage record with a negative token count is an error naming the line and field', () => {
    expect(() => parseSessionLog(jsonl(stepLine(1), usageLine(1, -1, 0)))).toThrow(
      'session log line 2: a "usage" record\'s "inputTokens" must be a non-negative finite number (got -1)',
    )
  })

  test('a usage record attaches to the step it names, even after later steps', () => {
    const text = jsonl(stepLine(1), messageLine('p', 'append'), stepLine(2), usageLine(1, 100, 0), usageLine(2, 100, 80, { predictedTokens: 85, cacheWriteTokens: 3 }))
    expect(parseSessionLog(text).steps.map((step) => step.usage)).toEqual([
      { type: 'usage', step: 1, inputTokens: 100, cachedInputTokens: 0 },
      { type: 'usage', step: 2, inputTokens: 100, cachedInputTokens: 80, predictedTokens: 85, cacheWriteTokens: 3 },
    ])
  })

  test('a log written before these fields existed replays with the stable prefix as the reusable one', () => {
    const [step] = parseSessionLog('{"type":"step","step":1,"compacted":false,"stablePrefixLength":5,"stablePrefixBytes":5,"changedSections":[]}\n').steps
    expect(step).toMatchObject({ toolsChanged: false, configChanged: false, reusablePrefixLength: 5, reusablePrefixBytes: 5 })
  })

  test('writeUsage rejects anything but a usage record', () => {
    const log = createSessionLogWriter(path)
    expect(() => log.writeUsage({ inputTokens: 1, cachedInputTokens: 0 } as never)).toThrow(TypeError)
    expect(readFileSync(path, { encoding: 'utf8', flag: 'a+' })).toBe('')
  })

  test.each([
    [{ inputTokens: Number.NaN, cachedInputTokens: 0 }, '"inputTokens" must be a non-negative finite number (got NaN)'],
    [{ inputTokens: -5, cachedInputTokens: 0 }, '"inputTokens" must be a non-negative finite number (got -5)'],
    [{ inputTokens: 5, cachedInputTokens: 'x' }, '"cachedInputTokens" must be a non-negative finite number (got "x")'],
    [
      { inputTokens: 5, cachedInputTokens: 0, predictedTokens: Infinity },
      '"predictedTokens" must be a non-negative finite number (got Infinity)',
    ],
    [{ step: 0, inputTokens: 5, cachedInputTokens: 0 }, '"step" must be a positive integer (got 0)'],
    [{ inputTokens: 5n, cachedInputTokens: 0 }, '"inputTokens" must be a non-negative finite number (got 5n)'],
    [{ inputTokens: () => 5, cachedInputTokens: 0 }, '"inputTokens" must be a non-negative finite number (got function)'],
  ])('writeUsage rejects a record the reader would reject (case %#), naming the field, and writes nothing', (fields, rule) => {
    const surface = createStepSurface()
    const log = createSessionLogWriter(path)
    log.write(surface.step({ assembly: plain([['a', 'one']]) }))
    const before = readFileSync(path, 'utf8')
    const write = (): void => log.writeUsage({ type: 'usage', step: 1, ...fields } as never)
    expect(write).toThrow(TypeError)
    expect(write).toThrow(`writeUsage: a "usage" record's ${rule}`)
    expect(readFileSync(path, 'utf8')).toBe(before)
    expect(readSessionLog(path).steps).toHaveLength(1)
  })
})
