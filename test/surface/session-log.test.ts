import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  createStepSurface,
  parseSessionLog,
  serializeStep,
  type PromptAssembly,
  type StepInput,
  type StepSurfaceOptions,
  type ToolSchema,
} from '../../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../../src/node.js'
import { BARE, mintScope, mount, tool } from '../assembly/system-prompt.fixtures.js'

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
    expect(readSessionLog(path)).toHaveLength(2)
    createSessionLogWriter(path, { truncate: true })
    expect(readFileSync(path, 'utf8')).toBe('')
  })

  test('a warning is logged with its layer as a label, never the scope key object', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1', secret: { huge: 'x'.repeat(100) } }
    const agent = await mintScope(app, key)
    agent.ctx.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    record([{ assembly: await app.systemPrompt.assemble({ scope: key }) }])
    const [step] = readSessionLog(path)
    expect(step!.warnings).toEqual([
      { kind: 'volatile-variable', section: 'clock', layer: 'agent-1', variable: 'now', message: expect.any(String) },
    ])
    expect(readFileSync(path, 'utf8')).not.toContain('xxxx')
  })
})

describe('reader', () => {
  test('replays replace-mode system messages into the prompt of every step', () => {
    record([
      { assembly: plain([['a', 'Alpha']]) },
      { assembly: plain([['a', 'Alpha']]) },
      { assembly: plain([['a', 'Beta']]) },
    ])
    const steps = readSessionLog(path)
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
    const [, second] = readSessionLog(path)
    expect(second!.prompt).toBe('Beta')
    expect(second!.systemMessages).toEqual([
      { node: 0, text: 'Alpha' },
      { node: 3, text: 'Beta' },
    ])
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
    const [, second, third] = readSessionLog(path)
    expect(second!.contextSnapshot).toContain('cwd: /a')
    expect(third).toMatchObject({ compacted: true, prompt: 'Alpha', systemMessages: [{ node: 0, text: 'Alpha' }], contextSnapshot: '' })
  })

  test('tools and config come from the latest request/header', () => {
    record([
      { assembly: plain([], [tool('bash')]), config: { model: 'm1' } },
      { assembly: plain([['a', 'changed']], [tool('bash')]), config: { model: 'm1' } },
      { assembly: plain([['a', 'changed']], [tool('bash'), tool('grep')]), config: { model: 'm2' } },
    ])
    const steps = readSessionLog(path)
    expect(steps.map((step) => step.tools.map((t) => t.name))).toEqual([['bash'], ['bash'], ['bash', 'grep']])
    expect(steps.map((step) => step.config)).toEqual([{ model: 'm1' }, { model: 'm1' }, { model: 'm2' }])
    expect(steps[2]!.tools[1]).toEqual(tool('grep'))
  })

  test('each replayed step carries its events and prefix report', () => {
    record([{ assembly: plain([['a', 'Alpha'], ['b', 'one']]) }, { assembly: plain([['a', 'Alpha'], ['b', 'two']]) }])
    const [, second] = readSessionLog(path)
    expect(second).toMatchObject({
      step: 2,
      events: [{ type: 'system/message', op: 'replace', node: 0, text: 'Alpha\n\ntwo' }],
      stablePrefixLength: 'Alpha\n\n'.length,
      stablePrefixBytes: 7,
      changedSections: ['b'],
      firstChangedSection: 'b',
    })
  })

  test('text with newlines, separators and astral characters survives the round trip', () => {
    const text = 'line 1\nline 2\u2028\u2029 😀 "quoted" \\ back'
    record([{ assembly: plain([['a', text]]) }])
    expect(readSessionLog(path)[0]!.prompt).toBe(text)
  })

  test('an empty log replays to no steps', () => {
    expect(parseSessionLog('')).toEqual([])
  })

  test('a line that is not JSON is an error naming the line', () => {
    expect(() => parseSessionLog('{"type":"step","step":1,"compacted":false,"changedSections":[]}\n{oops\n')).toThrow(
      /line 2 is not JSON/,
    )
  })

  test('an event before the first step record is an error', () => {
    expect(() => parseSessionLog('{"type":"system/message","op":"append","node":0,"text":"x"}\n')).toThrow(
      /line 1: "system\/message" comes before the first step record/,
    )
  })

  test('an unknown record type is an error listing the known ones', () => {
    expect(() => parseSessionLog('{"type":"step","step":1,"compacted":false,"changedSections":[]}\n{"type":"nope"}\n')).toThrow(
      /line 2: unknown record type "nope"; known types: step, system\/message/,
    )
  })

  test('a malformed system message is an error naming the line', () => {
    expect(() =>
      parseSessionLog('{"type":"step","step":1,"compacted":false,"changedSections":[]}\n{"type":"system/message","op":"insert","node":0,"text":"x"}\n'),
    ).toThrow(/line 2: a "system\/message" record needs op/)
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
    const steps = readSessionLog(path)
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
    const log = '{"type":"step","step":1,"compacted":false,"changedSections":[]}\n{"type":"usage","step":2,"inputTokens":1,"cachedInputTokens":0}\n'
    expect(() => parseSessionLog(log)).toThrow(/line 2: usage for step 2 has no step record before it/)
  })

  test('a usage record with a negative token count is an error naming the line', () => {
    const log = '{"type":"step","step":1,"compacted":false,"changedSections":[]}\n{"type":"usage","step":1,"inputTokens":-1,"cachedInputTokens":0}\n'
    expect(() => parseSessionLog(log)).toThrow(/line 2: a "usage" record needs/)
  })

  test('a log written before these fields existed replays with the stable prefix as the reusable one', () => {
    const [step] = parseSessionLog('{"type":"step","step":1,"compacted":false,"stablePrefixLength":5,"stablePrefixBytes":5,"changedSections":[]}\n')
    expect(step).toMatchObject({ toolsChanged: false, configChanged: false, reusablePrefixLength: 5, reusablePrefixBytes: 5 })
  })

  test('writeUsage rejects anything but a usage record', () => {
    const log = createSessionLogWriter(path)
    expect(() => log.writeUsage({ inputTokens: 1, cachedInputTokens: 0 } as never)).toThrow(TypeError)
    expect(readFileSync(path, { encoding: 'utf8', flag: 'a+' })).toBe('')
  })
})
