import { describe, expect, test } from 'vitest'
import { agentNameOf, LogError, parseAgentLog } from '../../src/cli/log-reader.js'
import { headerLine, jsonl, messageLine, stepLine, threeStepLog, usageLine } from './fixtures.js'

const FILE = 'logs/a.jsonl'

describe('parseAgentLog: replay', () => {
  test('each step holds the prompt, tools and config the model has after it', () => {
    const log = parseAgentLog(threeStepLog(), FILE)
    expect(log.steps.map((step) => [step.step, step.prompt.split('\n\n')[1], step.tools.map((tool) => tool.name), step.config.temperature])).toEqual([
      [1, 'Persona A.', ['read'], 0],
      [2, 'Persona A.', ['read'], 0],
      [3, 'Persona B.', ['read', 'browse'], 1],
    ])
  })

  test('a step without events keeps the previous prompt and has no header (promptSent false)', () => {
    const step2 = parseAgentLog(threeStepLog(), FILE).steps[1]!
    expect({ promptSent: step2.promptSent, header: step2.header }).toEqual({ promptSent: false, header: undefined })
  })

  test('the agent is named after the file without .jsonl', () => {
    expect(parseAgentLog(threeStepLog(), 'logs/session.agent-2.jsonl').name).toBe('session.agent-2')
    expect(agentNameOf('/x/y/run.JSONL')).toBe('run')
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
    const step = parseAgentLog(text, FILE).steps[0]!
    expect([step.promptTokens, step.stablePrefixTokens, step.withheld, step.overBudget, step.toolsChanged, step.sections]).toEqual([
      90,
      0,
      ['examples'],
      true,
      false,
      ['identity'],
    ])
  })

  test('a log of the base format reads without any newer field (none is required)', () => {
    const step = parseAgentLog(jsonl(JSON.stringify({ type: 'step', step: 1, compacted: false, stablePrefixLength: 0, stablePrefixBytes: 0, changedSections: [] })), FILE).steps[0]!
    expect([step.warnings, step.sections, step.promptTokens, step.usage]).toEqual([[], undefined, undefined, undefined])
  })

  test('a usage record attaches to the step it names', () => {
    const text = jsonl(stepLine(1), messageLine('p', 'append'), usageLine(1, 100, 0), stepLine(2), usageLine(2, 100, 80, { predictedTokens: 85, cacheWriteTokens: 3 }))
    const steps = parseAgentLog(text, FILE).steps
    expect(steps.map((step) => step.usage)).toEqual([
      { inputTokens: 100, cachedInputTokens: 0 },
      { inputTokens: 100, cachedInputTokens: 80, predictedTokens: 85, cacheWriteTokens: 3 },
    ])
  })

  test('a compacted step drops in-history appends: the model holds node 0 again', () => {
    const text = jsonl(stepLine(1), messageLine('v1', 'append', 0), stepLine(2), messageLine('v2', 'append', 5), stepLine(3, { compacted: true }))
    expect(parseAgentLog(text, FILE).steps.map((step) => step.prompt)).toEqual(['v1', 'v2', 'v1'])
  })

  test('a context snapshot records its section names on its step', () => {
    const text = jsonl(stepLine(1), JSON.stringify({ type: 'context/snapshot', text: 'x', sections: [{ name: 'clock', text: 'x' }] }))
    expect(parseAgentLog(text, FILE).steps[0]!.snapshotSections).toEqual(['clock'])
  })
})

describe('parseAgentLog: malformed input names the file and line', () => {
  const fails = (text: string): string => {
    try {
      parseAgentLog(text, FILE)
    } catch (error) {
      expect(error).toBeInstanceOf(LogError)
      return (error as Error).message
    }
    throw new Error('expected a LogError')
  }

  test('a line that is not JSON', () => {
    expect(fails(jsonl(stepLine(1), '{"type":"system/message",'))).toMatch(/^session log "logs\/a\.jsonl" line 2: not JSON \(.+\); each line holds one JSON object$/)
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
      'session log "logs/a.jsonl" line 1: "stablePrefixLength" must be a non-negative integer (got "12")',
    )
  })

  test('a newer field, when present, is validated too', () => {
    expect(fails(jsonl(stepLine(1, { withheld: ['a', 3] })))).toBe('session log "logs/a.jsonl" line 1: "withheld[1]" must be a string (got 3)')
  })

  test('a budget warning\'s sections must be strings', () => {
    expect(fails(jsonl(stepLine(1, { warnings: [{ kind: 'withheld', message: 'm', sections: ['a', 1] }] })))).toBe(
      'session log "logs/a.jsonl" line 1: "warnings[0].sections[1]" must be a string (got 1)',
    )
  })

  test('an event before the first step record', () => {
    expect(fails(jsonl(messageLine('p', 'append'), stepLine(1)))).toMatch(/^session log "logs\/a\.jsonl" line 1: "system\/message" comes before the first step record/)
  })

  test('a tool without a name', () => {
    expect(fails(jsonl(stepLine(1), JSON.stringify({ type: 'request/header', config: {}, tools: [{ description: 'x' }], reason: 'initial' })))).toBe(
      'session log "logs/a.jsonl" line 2: "tools[0]" must be an object with a string "name" (got {"description":"x"})',
    )
  })

  test('a usage record for a step that is not in the log', () => {
    expect(fails(jsonl(stepLine(1), usageLine(4, 10, 0)))).toBe(
      'session log "logs/a.jsonl" line 2: "usage" record for step 4, which is not in the log before it; a usage record follows its step',
    )
  })

  test('a log without step records', () => {
    expect(fails('\n')).toBe('session log "logs/a.jsonl" holds no step records; a session log starts with {"type":"step",…} (is it empty?)')
  })

  test('a header with an array for config', () => {
    expect(fails(jsonl(stepLine(1), headerLine([], 'initial').replace('{"model":"m"}', '[]')))).toBe(
      'session log "logs/a.jsonl" line 2: "config" must be an object (got [])',
    )
  })
})
