import fc from 'fast-check'
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readAgentLog, runCli } from '../../src/cli/run.js'
import { agentModel } from '../../src/cli/report-model.js'
import { createStepSurface, serializeStep, type PromptAssembly, type StepSurface, type SurfaceEvent, type UsageRecord } from '../../src/index.js'
import { createSessionLogWriter, readSessionLog, type SessionLogWriter } from '../../src/node.js'

// Random sessions written by real surfaces and writers: steps, usage records
// (some written late), writers reopened mid-session, new surfaces appending
// to the same file, compactions, and at most one crash mid-write (a torn line
// in the middle or at the end). The library's reader, the CLI's report model
// and `inspect` must each agree, record for record, with what was written,
// as tracked by a plain model of the log below.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 80)

const dir = mkdtempSync(join(tmpdir(), 'promptloom-log-property-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let runs = 0

// ── scenarios ───────────────────────────────────────────────────────────────

type Action =
  | { readonly kind: 'step'; readonly a: string; readonly b: string; readonly tools: number; readonly compacted: boolean; readonly grow: number }
  | { readonly kind: 'usage'; readonly input: number; readonly cachedShare: number; readonly late: boolean }
  | { readonly kind: 'reopen' }

interface Session {
  readonly mode: 'replace' | 'in-history'
  readonly tokens: boolean
  readonly actions: readonly Action[]
}

interface Scenario {
  readonly sessions: readonly Session[]
  /** After which session the process dies mid-write (a torn line), if it does. */
  readonly crashAfter: number | null
  /** Where the torn write stops, as a share of the record's first line. */
  readonly cut: number
}

const STEP = fc.record({
  kind: fc.constant('step' as const),
  a: fc.constantFrom('You are Loom.', 'You are Loom. Plan.', 'Ünïcode 😀'),
  b: fc.constantFrom('', 'Tools: read.', 'Tools: read, grep. 😁'),
  tools: fc.nat(2),
  compacted: fc.boolean(),
  grow: fc.nat(3),
})
const USAGE = fc.record({
  kind: fc.constant('usage' as const),
  input: fc.oneof(fc.nat(5000), fc.double({ min: 0, max: 5000, noNaN: true })),
  cachedShare: fc.double({ min: 0, max: 1, noNaN: true }),
  late: fc.boolean(),
})
const SESSION: fc.Arbitrary<Session> = fc.record({
  mode: fc.constantFrom('replace' as const, 'in-history' as const),
  tokens: fc.boolean(),
  actions: fc.array(fc.oneof({ arbitrary: STEP, weight: 4 }, { arbitrary: USAGE, weight: 2 }, { arbitrary: fc.constant({ kind: 'reopen' as const }), weight: 1 }), {
    maxLength: 12,
  }),
})
const SCENARIO: fc.Arbitrary<Scenario> = fc.record({
  sessions: fc.array(SESSION, { minLength: 1, maxLength: 4 }),
  crashAfter: fc.option(fc.nat(4)),
  cut: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
})

// ── the plain model: what each written step must replay to ──────────────────

interface Expected {
  readonly session: number
  readonly step: number
  readonly compacted: boolean
  readonly prompt: string
  readonly systemMessages: readonly { readonly node: number; readonly text: string }[]
  readonly stablePrefixLength: number
  readonly reusablePrefixLength: number
  readonly promptTokens: number | undefined
  usage: UsageRecord | undefined
}

interface Written {
  readonly path: string
  readonly steps: Expected[]
  /** The line the crash left torn, if one did. */
  readonly tornLine: number | undefined
}

function assemblyOf(action: Extract<Action, { kind: 'step' }>): Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'> {
  return {
    sections: [
      { name: 'identity', order: 0, text: action.a },
      { name: 'tools', order: 1, text: action.b },
    ],
    contexts: [],
    variables: {},
    tools: ['read', 'grep', 'bash'].slice(0, action.tools + 1).map((name) => ({ name, description: `${name} tool`, parameters: {} })),
  }
}

/** Plays the scenario through real surfaces and writers, tracking the expected replay with a Map of live messages. */
function write(scenario: Scenario): Written {
  const path = join(dir, `log-${runs++}.jsonl`)
  const steps: Expected[] = []
  const crashAt = scenario.crashAfter === null ? -1 : Math.min(scenario.crashAfter, scenario.sessions.length - 1)
  let tornLine: number | undefined
  let sessionsWithSteps = 0
  let writer: SessionLogWriter = createSessionLogWriter(path, { truncate: true })

  scenario.sessions.forEach((session, index) => {
    // Each session is a new surface (a new process) whose writer resumes the file.
    const surface: StepSurface = createStepSurface({ systemPromptUpdate: session.mode, ...(session.tokens ? { countTokens: (text: string) => text.length * 0.1 } : {}) })
    if (index > 0) writer = createSessionLogWriter(path)
    const live = new Map<number, string>()
    let prompt = ''
    let history = 0
    let taken = 0
    let late: UsageRecord | undefined
    const ofSession: Expected[] = []

    const nextInput = (action: Extract<Action, { kind: 'step' }>) => {
      const compacted = taken > 0 && action.compacted
      history = compacted ? 1 + action.grow : history + 1 + action.grow
      return { assembly: assemblyOf(action), compacted, ...(session.mode === 'in-history' ? { historyLength: history } : {}) }
    }
    const writeUsage = (record: UsageRecord): void => {
      writer.writeUsage(record)
      ofSession.find((step) => step.step === record.step)!.usage = record
    }

    for (const action of session.actions) {
      if (action.kind === 'reopen') {
        writer = createSessionLogWriter(path)
        continue
      }
      if (action.kind === 'usage') {
        if (taken === 0) continue
        const record = surface.observeUsage({ inputTokens: action.input, cachedInputTokens: action.input * action.cachedShare })
        if (action.late) late = record
        else writeUsage(record)
        continue
      }
      const input = nextInput(action)
      const result = surface.step(input)
      writer.write(result)
      if (++taken === 1) sessionsWithSteps++
      if (input.compacted) {
        for (const node of [...live.keys()]) if (node > 0) live.delete(node)
        prompt = live.get(0) ?? ''
      }
      for (const event of result.events as SurfaceEvent[]) {
        if (event.type !== 'system/message') continue
        live.set(event.node, event.text)
        prompt = event.text
      }
      const expected: Expected = {
        session: sessionsWithSteps,
        step: result.step,
        compacted: input.compacted,
        prompt,
        systemMessages: [...live].sort(([a], [b]) => a - b).map(([node, text]) => ({ node, text })),
        stablePrefixLength: result.stablePrefixLength,
        reusablePrefixLength: result.reusablePrefixLength,
        promptTokens: result.promptTokens,
        usage: undefined,
      }
      ofSession.push(expected)
      steps.push(expected)
      if (late !== undefined) {
        writeUsage(late)
        late = undefined
      }
    }
    if (late !== undefined) writeUsage(late)

    if (index === crashAt) {
      // The process dies while writing its next step: the start of the step record reaches the file.
      const record = serializeStep(surface.step(nextInput({ kind: 'step', a: 'lost', b: '', tools: 0, compacted: false, grow: 0 }))).split('\n')[0]!
      tornLine = readFileSync(path, 'utf8').split('\n').length
      appendFileSync(path, record.slice(0, 1 + Math.floor(scenario.cut * (record.length - 1))))
    }
  })
  return { path, steps, tornLine }
}

// ── the property ────────────────────────────────────────────────────────────

const usageFigures = (usage: UsageRecord | undefined) =>
  usage === undefined ? undefined : { inputTokens: usage.inputTokens, cachedInputTokens: usage.cachedInputTokens, predictedTokens: usage.predictedTokens }

function inspect(path: string): { code: number; stdout: string; stderr: string } {
  let stdout = ''
  let stderr = ''
  const code = runCli(['inspect', path], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } })
  return { code, stdout, stderr }
}

function check({ path, steps: expected, tornLine }: Written): void {
  const warning = tornLine === undefined ? [] : [`session log "${path}" line ${tornLine}: skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept`]

  // The library's reader.
  const replay = readSessionLog(path)
  expect(replay.warnings.map((w) => w.message)).toEqual(warning)
  expect(
    replay.steps.map((step) => ({
      session: step.session,
      step: step.step,
      compacted: step.compacted,
      prompt: step.prompt,
      systemMessages: step.systemMessages,
      stablePrefixLength: step.stablePrefixLength,
      reusablePrefixLength: step.reusablePrefixLength,
      promptTokens: step.promptTokens,
      usage: step.usage,
    })),
  ).toEqual(expected)

  // The CLI's view: the report model and inspect.
  const run = inspect(path)
  if (expected.length === 0) {
    expect([run.code, run.stderr]).toEqual([1, `promptloom: session log "${path}" holds no step records; a session log starts with {"type":"step",…} (is it empty?)\n`])
    return
  }
  expect([run.code, run.stderr]).toEqual([0, warning.map((message) => `promptloom: warning: ${message}\n`).join('')])
  const log = readAgentLog(path)
  expect(log.warnings.map((w) => w.message)).toEqual(warning)
  const rows = agentModel(log).rows
  expect(
    rows.map((row) => ({
      session: row.session,
      step: row.step,
      first: row.first,
      compacted: row.compacted,
      promptLength: row.promptLength,
      stablePrefixLength: row.stablePrefixLength,
      reusablePrefixLength: row.reusablePrefixLength,
      promptTokens: row.promptTokens,
      usage: row.usage === undefined ? undefined : { inputTokens: row.usage.inputTokens, cachedInputTokens: row.usage.cachedInputTokens, predictedTokens: row.usage.predictedTokens },
    })),
  ).toEqual(
    expected.map((step, i) => ({
      session: step.session,
      step: step.step,
      first: i === 0 || expected[i - 1]!.session !== step.session,
      compacted: step.compacted,
      promptLength: step.prompt.length,
      stablePrefixLength: step.stablePrefixLength,
      reusablePrefixLength: step.reusablePrefixLength,
      promptTokens: step.promptTokens,
      usage: usageFigures(step.usage),
    })),
  )
  const tableSteps = run.stdout
    .split('\n')
    .slice(2)
    .map((line) => /^ *(\d+)\*? /.exec(line)?.[1])
    .filter((step) => step !== undefined)
    .map(Number)
  expect(tableSteps).toEqual(expected.map((step) => step.step))
}

describe('session log: library reader, report model and inspect agree with what was written', () => {
  it('record for record, for random sessions, usage, restarts, reopened writers, compactions and one torn line', () => {
    fc.assert(
      fc.property(SCENARIO, (scenario) => {
        const written = write(scenario)
        try {
          check(written)
        } finally {
          rmSync(written.path)
        }
      }),
      { numRuns },
    )
  })
})
