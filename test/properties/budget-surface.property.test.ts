import { signal, type Signal } from '@preact/signals-core'
import fc from 'fast-check'
import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { createStepSurface, render, type BudgetWarning, type RenderedPrompt, type StepResult } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'
import { GreedyModel, movable, type ModelSpec } from './budget-model.js'

// The token budget through the real surface: random registrations,
// disposals, text edits and unchanged steps on a live SystemPrompt, each step
// going through createStepSurface({ budget }). The tokenizer is additive (a
// space costs 0, other ASCII 1, anything else 2), so the budget's count rule
// (parts plus separators) equals counting the joined text.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

function countTokens(text: string): number {
  let tokens = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    tokens += code === 32 ? 0 : code < 128 ? 1 : 2
  }
  return tokens
}

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
/** Mostly texts of 1–12 tokens (so edits land near the thresholds often), some arbitrary strings. */
const textArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 12 }).map((n) => 'tok'.repeat(n).slice(0, n)) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom('word word', 'é😀', 'a longer text here') },
)

type Op =
  | { readonly kind: 'step' }
  | { readonly kind: 'register'; readonly name: string; readonly order: number; readonly text: string; readonly priority: number; readonly flag: 'none' | 'required' | 'complete' }
  | { readonly kind: 'dispose'; readonly at: number }
  | { readonly kind: 'edit'; readonly at: number; readonly text: string }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'step' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('register' as const),
      name: fc.constantFrom(...NAMES),
      order: fc.integer({ min: 0, max: 4 }),
      text: textArb,
      priority: fc.integer({ min: -2, max: 2 }),
      flag: fc.oneof({ weight: 8, arbitrary: fc.constant('none' as const) }, { weight: 2, arbitrary: fc.constant('required' as const) }, { weight: 1, arbitrary: fc.constant('complete' as const) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dispose' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), text: textArb }) },
)
const runArb = fc.record({
  maxTokens: fc.integer({ min: 1, max: 24 }),
  headroom: fc.constantFrom(0, 0.1, 0.25, 0.5),
  ops: fc.array(opArb, { minLength: 1, maxLength: 25 }),
})
type Run = typeof runArb extends fc.Arbitrary<infer T> ? T : never

interface Observed {
  /** The unbudgeted prompt of this step (`render(assembly)`, memoized like the surface's). */
  readonly full: RenderedPrompt
  readonly specs: readonly ModelSpec[]
  readonly result: StepResult
  /** The registry changed since the previous step (a registration, disposal or text edit). */
  readonly registryChanged: boolean
  readonly previous: StepResult | undefined
  readonly model: ReturnType<GreedyModel['decide']>
}

interface Live {
  readonly name: string
  readonly text: Signal<string>
  readonly dispose: () => unknown
  readonly complete: boolean
}

/** Plays `run` on a fresh SystemPrompt and surface, handing every step to `check`. */
async function drive(run: Run, check: (observed: Observed) => void): Promise<void> {
  const app: Context = await mount(BARE)
  const surface = createStepSurface({ budget: { maxTokens: run.maxTokens, countTokens, headroom: run.headroom } })
  const model = new GreedyModel(run.maxTokens, run.headroom, countTokens)
  const live: Live[] = []
  let changed = true
  let previous: StepResult | undefined
  {
    for (const op of [...run.ops, { kind: 'step' as const }, { kind: 'step' as const }]) {
      switch (op.kind) {
        case 'register': {
          if (live.some((entry) => entry.name === op.name)) break
          // One complete section per scope (a second one is an assembly error).
          if (op.flag === 'complete' && live.some((entry) => entry.complete)) break
          const text = signal(op.text)
          const dispose = app.systemPrompt.section({
            name: op.name,
            order: op.order,
            text,
            priority: op.priority,
            ...(op.flag === 'none' ? {} : { [op.flag]: true }),
          })
          live.push({ name: op.name, text, dispose, complete: op.flag === 'complete' })
          changed = true
          break
        }
        case 'dispose': {
          if (live.length === 0) break
          const [entry] = live.splice(op.at % live.length, 1)
          await entry!.dispose()
          changed = true
          break
        }
        case 'edit': {
          if (live.length === 0) break
          const entry = live[op.at % live.length]!
          if (entry.text.value !== op.text) changed = true
          entry.text.value = op.text
          break
        }
        case 'step': {
          const assembly = await app.systemPrompt.assemble()
          const full = render(assembly)
          const specs = full.parts.map(({ name, text, priority, required, complete }) => ({ name, text, priority, required, complete }))
          const decision = model.decide(specs)
          const result = surface.step({ assembly })
          check({ full, specs, result, registryChanged: changed, previous, model: decision })
          model.withheld = decision.withheld
          previous = result
          changed = false
          break
        }
      }
    }
  }
}

const budgetWarnings = (result: StepResult): BudgetWarning[] => result.warnings.filter((warning): warning is BudgetWarning => 'sections' in warning)

describe('token budget through createStepSurface', () => {
  it('(a) after every step the prompt sent fits maxTokens unless overBudget, and holds every required and complete section', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, (run) =>
        drive(run, ({ full, result }) => {
          const sent = result.rendered.parts.map((part) => part.name)
          expect(result.promptTokens).toBe(countTokens(result.rendered.text))
          if (result.overBudget) expect(result.promptTokens).toBeGreaterThan(run.maxTokens)
          else expect(result.promptTokens).toBeLessThanOrEqual(run.maxTokens)
          for (const part of full.parts) if (part.required || part.complete) expect(sent, part.name).toContain(part.name)
          // what is sent is the full prompt less exactly the withheld sections, in order
          expect(sent).toEqual(full.parts.map((part) => part.name).filter((name) => !result.withheld!.includes(name)))
          expect(result.withheld).toEqual(full.parts.filter((part) => !sent.includes(part.name)).map((part) => part.name))
          const message = result.events.find((event) => event.type === 'system/message')
          if (message !== undefined) expect(message.text).toBe(result.rendered.text)
        }),
      ),
      { numRuns },
    )
  })

  it('(b) the withheld set changes only when the registry changed and the budget had to or could; an unchanged registry sends a byte-identical prompt', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, (run) =>
        drive(run, ({ specs, result, registryChanged, previous }) => {
          if (previous === undefined) return
          if (!registryChanged) {
            expect(result.rendered).toBe(previous.rendered)
            expect(result.rendered.text).toBe(previous.rendered.text)
            expect(result.withheld).toEqual(previous.withheld)
            expect(result.events).toEqual([])
            expect(result.stablePrefixLength).toBe(result.rendered.text.length)
            expect(budgetWarnings(result).filter((warning) => warning.kind !== 'over-budget')).toEqual([])
            return
          }
          const before = new Set(previous.withheld)
          const stillHeld = specs.filter((spec) => movable(spec) && before.has(spec.name))
          const tokensWithPrevious = countTokens(specs.filter((spec) => !stillHeld.includes(spec)).map((spec) => spec.text).join('\n\n'))
          const below = (x: ModelSpec, y: ModelSpec) => x.priority < y.priority || (x.priority === y.priority && specs.indexOf(x) > specs.indexOf(y))
          for (const spec of specs) {
            const now = result.withheld!.includes(spec.name)
            if (now && !before.has(spec.name)) {
              // had to: over maxTokens with the previous set, or it ranks below a section still withheld
              expect(tokensWithPrevious > run.maxTokens || stillHeld.some((held) => below(spec, held)), `newly withheld "${spec.name}"`).toBe(true)
            }
            if (!now && movable(spec) && before.has(spec.name)) {
              // could: the prompt with it back fits within the headroom
              expect(result.promptTokens!, `restored "${spec.name}"`).toBeLessThanOrEqual(run.maxTokens * (1 - run.headroom))
            }
          }
        }),
      ),
      { numRuns },
    )
  })

  it('(c) the withheld sections equal what a plain greedy model of the rule chooses', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, (run) =>
        drive(run, ({ specs, result, model }) => {
          expect(result.withheld).toEqual(specs.filter((spec) => model.withheld.has(spec.name)).map((spec) => spec.name))
          expect(result.rendered.text).toBe(model.text)
          expect(result.overBudget).toBe(model.overBudget)
        }),
      ),
      { numRuns },
    )
  })
})
