import { signal, type Signal } from '@preact/signals-core'
import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createStepSurface,
  type PromptAssembly,
  type ReplayedStep,
  type StepInput,
  type StepResult,
  type SystemPromptUpdate,
  type ToolSchema,
} from '../../src/index.js'
import { createSessionLogWriter, readSessionLog } from '../../src/node.js'
import { referenceRenderContextSnapshot, referenceRenderPrompt } from '../reference/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const dir = mkdtempSync(join(tmpdir(), 'promptloom-surface-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let runs = 0

// ── oracles ─────────────────────────────────────────────────────────────────

/** The longest common prefix in UTF-16 code units, by plain character comparison. */
function lcp(a: string, b: string): number {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80
}

/**
 * Bytes of the common prefix in whole code points, from the UTF-8 encodings:
 * the common byte prefix, cut back until it ends on a code point boundary of
 * both texts. (The generated texts are well-formed.)
 */
function commonBytes(a: string, b: string): number {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  let n = 0
  while (n < x.length && n < y.length && x[n] === y[n]) n++
  while (n > 0 && (isContinuation(x[n]) || isContinuation(y[n]))) n--
  return n
}

// ── random step sequences over plain assemblies ─────────────────────────────

const NAMES = ['s0', 's1', 's2', 's3', 's4']
const TOOL_NAMES = ['bash', 'grep', 'read']
/** Few pieces, so texts often share prefixes; 😀/😁 share a high surrogate, é/è a lead byte. */
const PIECE = fc.constantFrom('a', 'b', 'é', 'è', '😀', '😁', '\n', ' ', '{{v0}}', '{{v1}}')
const TEXT = fc.array(PIECE, { maxLength: 5 }).map((pieces) => pieces.join(''))
const VALUE = fc.constantFrom('', 'x', 'y😀', '{{v0}}', 'é')

interface StepSpec {
  /** Sections present this step, in prompt order; `null` text keeps the name's previous text. */
  readonly sections: readonly { readonly name: string; readonly text: string | null }[]
  readonly variables: { v0: string; v1: string }
  readonly tools: readonly { readonly name: string; readonly variant: number }[]
  readonly contexts: readonly { readonly name: string; readonly text: string }[]
  readonly config: { model: string } | undefined
  readonly mode: SystemPromptUpdate | undefined
  readonly historyLength: number
  readonly compacted: boolean
}

const STEP: fc.Arbitrary<StepSpec> = fc.record({
  sections: fc.uniqueArray(
    fc.record({ name: fc.constantFrom(...NAMES), text: fc.option(TEXT, { freq: 2, nil: null }) }),
    { selector: (s) => s.name, maxLength: NAMES.length },
  ),
  variables: fc.record({ v0: VALUE, v1: VALUE }),
  tools: fc.uniqueArray(fc.record({ name: fc.constantFrom(...TOOL_NAMES), variant: fc.nat(1) }), {
    selector: (t) => t.name,
    maxLength: TOOL_NAMES.length,
  }),
  contexts: fc.uniqueArray(
    fc.record({ name: fc.constantFrom('cwd', 'git'), text: fc.constantFrom('', 'cwd: /a', 'cwd: /b', 'branch 😀') }),
    { selector: (c) => c.name, maxLength: 2 },
  ),
  config: fc.option(fc.record({ model: fc.constantFrom('m1', 'm2') }), { nil: undefined, freq: 3 }),
  mode: fc.option(fc.constantFrom<SystemPromptUpdate>('replace', 'in-history'), { nil: undefined, freq: 2 }),
  // At least 1: after the first step node 0 (the system message) is part of the history.
  historyLength: fc.integer({ min: 1, max: 40 }),
  compacted: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
})

function toolOf(name: string, variant: number): ToolSchema {
  return { name, description: variant === 0 ? `${name} tool` : `${name} tool, v2`, parameters: { type: 'object' } }
}

/** Builds each step's assembly, carrying a section's text over when its spec says `null`. */
function assembliesOf(specs: readonly StepSpec[]): Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>[] {
  const texts = new Map<string, string>()
  return specs.map((spec) => ({
    sections: spec.sections.map(({ name, text }, order) => {
      if (text !== null) texts.set(name, text)
      return { name, order, text: texts.get(name) ?? '' }
    }),
    contexts: spec.contexts.map(({ name, text }) => ({ name, text })),
    variables: { ...spec.variables },
    tools: spec.tools.map(({ name, variant }) => toolOf(name, variant)),
  }))
}

interface Recorded {
  readonly inputs: readonly StepInput[]
  readonly results: readonly StepResult[]
  readonly replayed: readonly ReplayedStep[]
  readonly modes: readonly SystemPromptUpdate[]
}

/** Runs the inputs through a surface and a JSONL file, then replays the file. */
function record(inputs: readonly StepInput[], surfaceMode: SystemPromptUpdate | undefined): Recorded {
  const path = join(dir, `run-${runs++}.jsonl`)
  const surface = createStepSurface(surfaceMode === undefined ? {} : { systemPromptUpdate: surfaceMode })
  const log = createSessionLogWriter(path)
  const results = inputs.map((input) => {
    const result = surface.step(input)
    log.write(result)
    return result
  })
  const replayed = readSessionLog(path).steps
  rmSync(path)
  const modes = inputs.map((input) => input.systemPromptUpdate ?? surfaceMode ?? 'replace')
  return { inputs, results, replayed, modes }
}

/** The laws every recorded sequence obeys, checked against the independent reference renderer. */
function checkLaws({ inputs, results, replayed, modes }: Recorded): void {
  expect(replayed).toHaveLength(inputs.length)
  let previous = ''
  inputs.forEach((input, i) => {
    const rendered = referenceRenderPrompt(input.assembly)
    const result = results[i]!
    const replay = replayed[i]!
    // The reported stable prefix is the true longest common prefix.
    expect(result.stablePrefixLength).toBe(i === 0 ? 0 : lcp(previous, rendered))
    expect(result.stablePrefixBytes).toBe(i === 0 ? 0 : commonBytes(previous, rendered))
    if (i > 0 && rendered !== previous) expect(result.changedSections.length).toBeGreaterThan(0)
    expect(result.firstChangedSection).toBe(result.changedSections[0])
    // Replaying the log gives back what the model saw.
    if (i === 0 || modes[i] === 'replace' || rendered !== '') {
      expect(replay.prompt).toBe(rendered)
    } else {
      // In-history mode records no empty prompt: the model keeps the last one it received.
      const held = input.compacted ? replayed[i - 1]!.systemMessages.find((m) => m.node === 0)!.text : replayed[i - 1]!.prompt
      expect(replay.prompt).toBe(held)
    }
    expect(replay.tools).toEqual(input.assembly.tools)
    expect(replay.config).toEqual(input.config ?? {})
    const snapshot = referenceRenderContextSnapshot(input.assembly)
    if (snapshot !== '') expect(replay.contextSnapshot).toBe(snapshot)
    else expect(replay.contextSnapshot).toBe(input.compacted || i === 0 ? '' : replayed[i - 1]!.contextSnapshot)
    // The log replays to the very results the surface returned.
    expect(replay.events).toEqual(result.events)
    expect(replay.stablePrefixLength).toBe(result.stablePrefixLength)
    expect(replay.changedSections).toEqual(result.changedSections)
    previous = rendered
  })
}

describe('step surface over random step sequences', () => {
  it('replaying the JSONL log reproduces every prompt and tool list, and the stable prefix is the true LCP', () => {
    fc.assert(
      fc.property(
        fc.array(STEP, { minLength: 1, maxLength: 10 }),
        fc.option(fc.constantFrom<SystemPromptUpdate>('replace', 'in-history'), { nil: undefined }),
        (specs, surfaceMode) => {
          const assemblies = assembliesOf(specs)
          const inputs: StepInput[] = specs.map((spec, i) => ({
            assembly: assemblies[i]!,
            ...(spec.config === undefined ? {} : { config: spec.config }),
            ...(spec.mode === undefined ? {} : { systemPromptUpdate: spec.mode }),
            historyLength: spec.historyLength,
            compacted: spec.compacted,
          }))
          checkLaws(record(inputs, surfaceMode))
        },
      ),
      { numRuns },
    )
  })

  it('the same laws hold for memoized assemblies from a live SystemPrompt (reused section strings)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            texts: fc.array(fc.option(TEXT, { freq: 2, nil: null }), { minLength: 4, maxLength: 4 }),
            v0: fc.option(VALUE, { freq: 2, nil: null }),
            tools: fc.uniqueArray(fc.constantFrom(...TOOL_NAMES), { maxLength: 3 }),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (steps) => {
          const app = await mount(BARE)
          const texts: Signal<string>[] = NAMES.slice(0, 4).map(() => signal(''))
          texts.forEach((text, i) => app.systemPrompt.section({ name: NAMES[i]!, order: i, text }))
          const v0 = signal('x')
          app.systemPrompt.variable('v0', v0)
          app.systemPrompt.variable('v1', 'y')
          const tools = signal<{ schemas: ToolSchema[] }>({ schemas: [] })
          app.systemPrompt.tools(tools)
          const surface = createStepSurface()
          const path = join(dir, `live-${runs++}.jsonl`)
          const log = createSessionLogWriter(path)
          const results: StepResult[] = []
          const live: StepInput[] = []
          for (const step of steps) {
            step.texts.forEach((text, i) => {
              if (text !== null) texts[i]!.value = text
            })
            if (step.v0 !== null) v0.value = step.v0
            tools.value = { schemas: step.tools.map((name) => toolOf(name, 0)) }
            const input = { assembly: await app.systemPrompt.assemble() }
            live.push(input)
            const result = surface.step(input)
            log.write(result)
            results.push(result)
          }
          const replayed = readSessionLog(path).steps
          rmSync(path)
          checkLaws({ inputs: live, results, replayed, modes: live.map(() => 'replace') })
        },
      ),
      { numRuns: Math.max(1, Math.floor(numRuns / 4)) },
    )
  })
})
