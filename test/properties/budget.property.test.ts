import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { buildRenderedPrompt, type PartInput, type RenderedPrompt } from '../../src/render/rendered-prompt.js'
import { TokenBudget, type BudgetPlan } from '../../src/surface/budget.js'
import { GreedyModel, movable } from './budget-model.js'

// The token budget over random sequences of prompt changes, unchanged steps
// and aborted steps (planned, never committed), against a plain greedy model
// of the SPEC §5 rule that recounts the whole joined text on every question.
// The tokenizer is additive (a space costs 0, other ASCII 1, anything else 2),
// so counting the joined text equals the budget's count rule (parts plus
// separators) and the model can use it directly.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

function countTokens(text: string): number {
  let tokens = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    tokens += code === 32 ? 0 : code < 128 ? 1 : 2
  }
  return tokens
}

type Spec = Pick<PartInput, 'name' | 'text' | 'priority' | 'required' | 'complete' | 'stability' | 'cacheBreakpoint'>

function partOf(spec: Spec): PartInput {
  return { ...spec, layer: 'global', origin: 'registry', variables: [], substitutions: [] }
}

const textArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 24 }),
  fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }),
)
const priorityArb = fc.integer({ min: -2, max: 2 })
const specArb: fc.Arbitrary<Spec> = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
  text: textArb,
  priority: priorityArb,
  required: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  complete: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  stability: fc.constantFrom('static', 'session', 'volatile'),
  cacheBreakpoint: fc.boolean(),
})
const promptArb = fc.uniqueArray(specArb, { selector: (spec) => spec.name, maxLength: 8 })

type Change =
  | { readonly kind: 'same' }
  | { readonly kind: 'rebuild' }
  | { readonly kind: 'prompt'; readonly specs: readonly Spec[] }
  | { readonly kind: 'edit'; readonly at: number; readonly text: string }
  | { readonly kind: 'priority'; readonly at: number; readonly priority: number }
  | { readonly kind: 'drop'; readonly at: number }
  | { readonly kind: 'add'; readonly spec: Spec; readonly at: number }
type Step = { readonly change: Change; readonly abort: boolean }

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'same' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'rebuild' as const }) },
  { weight: 1, arbitrary: promptArb.map((specs) => ({ kind: 'prompt' as const, specs })) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), text: textArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('priority' as const), at: fc.nat(), priority: priorityArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), spec: specArb, at: fc.nat() }) },
)
const stepArb: fc.Arbitrary<Step> = fc.record({ change: changeArb, abort: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) })
const runArb = fc.record({
  maxTokens: fc.integer({ min: 1, max: 120 }),
  headroom: fc.constantFrom(0, 0.1, 0.25, 0.5, 0.9),
  initial: promptArb,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
})

/** The specs after `change`; `undefined` for a change that leaves the prompt object as it is. */
function apply(specs: readonly Spec[], change: Change): readonly Spec[] | undefined {
  const at = (n: number) => n % Math.max(specs.length, 1)
  switch (change.kind) {
    case 'same':
      return undefined
    case 'rebuild':
      return specs
    case 'prompt':
      return change.specs
    case 'edit':
      return specs.map((spec, i) => (i === at(change.at) ? { ...spec, text: change.text } : spec))
    case 'priority':
      return specs.map((spec, i) => (i === at(change.at) ? { ...spec, priority: change.priority } : spec))
    case 'drop':
      return specs.filter((_, i) => i !== at(change.at))
    case 'add': {
      if (specs.some((spec) => spec.name === change.spec.name)) return specs
      const copy = [...specs]
      copy.splice(change.at % (specs.length + 1), 0, change.spec)
      return copy
    }
  }
}

// ── the run ─────────────────────────────────────────────────────────────────

interface Observed {
  readonly specs: readonly Spec[]
  readonly rendered: RenderedPrompt
  readonly plan: BudgetPlan
  readonly sameAsBefore: boolean
  /** The unbudgeted prompt is the very object the last committed step planned. */
  readonly sameObject: boolean
  readonly before: { readonly specs: readonly Spec[]; readonly plan: BudgetPlan } | undefined
  readonly model: ReturnType<GreedyModel<Spec>['decide']>
}

type Run = typeof runArb extends fc.Arbitrary<infer T> ? T : never

/** A tokenizer for `drive`: its count of one text, and the model's count of a prompt's sent texts. */
interface Tokenizer {
  readonly countTokens: (text: string) => number
  readonly countPrompt?: (texts: readonly string[]) => number
}

/** Drives the budget and the model over `run`, handing every committed step to `check`. */
function drive(run: Run, check: (step: Observed) => void, tokenizer: Tokenizer = { countTokens }): void {
  const budget = new TokenBudget({ maxTokens: run.maxTokens, countTokens: tokenizer.countTokens, headroom: run.headroom })
  const model = new GreedyModel(run.maxTokens, run.headroom, tokenizer.countTokens, tokenizer.countPrompt)
  let specs: readonly Spec[] = run.initial
  let rendered = buildRenderedPrompt(specs.map(partOf))
  let committed: { specs: readonly Spec[]; rendered: RenderedPrompt; plan: BudgetPlan } | undefined
  const steps: Step[] = [{ change: { kind: 'same' }, abort: false }, ...run.steps]
  for (const { change, abort } of steps) {
    const next = apply(specs, change)
    const candidate = next === undefined ? rendered : buildRenderedPrompt(next.map(partOf))
    const candidateSpecs = next ?? specs
    const plan = budget.plan(candidate)
    if (abort) continue
    budget.commit(plan)
    const sameObject = committed !== undefined && candidate === committed.rendered
    const sameAsBefore = committed !== undefined && sameSpecs(candidateSpecs, committed.specs)
    check({ specs: candidateSpecs, rendered: candidate, plan, sameAsBefore, sameObject, before: committed, model: model.decide(candidateSpecs) })
    model.withheld = model.decide(candidateSpecs).withheld
    specs = candidateSpecs
    rendered = candidate
    committed = { specs, rendered, plan }
  }
}

function sameSpecs(a: readonly Spec[], b: readonly Spec[]): boolean {
  return a.length === b.length && a.every((spec, i) => JSON.stringify(spec) === JSON.stringify(b[i]))
}

describe('token budget properties', () => {
  it('(a) the budgeted prompt fits maxTokens unless over budget, and keeps every required and complete part', () => {
    fc.assert(
      fc.property(runArb, (run) =>
        drive(run, ({ specs, rendered, plan }) => {
          const sent = new Set(plan.rendered.parts.map((part) => part.name))
          expect(plan.promptTokens).toBe(countTokens(plan.rendered.text))
          if (plan.overBudget) {
            expect(plan.promptTokens).toBeGreaterThan(run.maxTokens)
            expect(specs.filter((spec) => movable(spec) && sent.has(spec.name))).toEqual([])
          } else {
            expect(plan.promptTokens).toBeLessThanOrEqual(run.maxTokens)
          }
          for (const spec of specs) if (!movable(spec)) expect(sent.has(spec.name), spec.name).toBe(true)
          const kept = rendered.parts.filter((part) => !plan.withheld.includes(part.name))
          expect(plan.rendered).toEqual(plan.withheld.length === 0 ? rendered : buildRenderedPrompt(kept.map(({ start: _s, end: _e, ...input }) => input)))
          expect(plan.withheld).toEqual(rendered.parts.filter((part) => !sent.has(part.name)).map((part) => part.name))
        }),
      ),
      { numRuns },
    )
  })

  it('(b) the withheld set changes only when the prompt changed and it had to (over budget) or could (headroom)', () => {
    fc.assert(
      fc.property(runArb, (run) =>
        drive(run, ({ specs, plan, sameAsBefore, sameObject, before }) => {
          if (before === undefined) return
          if (sameAsBefore) {
            expect(plan.withheld).toEqual(before.plan.withheld)
            expect(plan.rendered.text).toBe(before.plan.rendered.text)
            // the same object too, unless nothing is withheld: then it is the (rebuilt) input itself
            if (sameObject || plan.withheld.length > 0) expect(plan.rendered).toBe(before.plan.rendered)
            expect(plan.warnings.filter((warning) => warning.kind !== 'over-budget')).toEqual([])
            return
          }
          const previous = new Set(before.plan.withheld)
          const stillHeld = specs.filter((spec) => movable(spec) && previous.has(spec.name))
          const tokensWithPrevious = countTokens(specs.filter((spec) => !stillHeld.includes(spec)).map((spec) => spec.text).join('\n\n'))
          const rank = (spec: Spec) => [spec.priority, -specs.indexOf(spec)] as const
          const below = (x: Spec, y: Spec) => rank(x)[0] < rank(y)[0] || (rank(x)[0] === rank(y)[0] && rank(x)[1] < rank(y)[1])
          for (const spec of specs) {
            const now = plan.withheld.includes(spec.name)
            if (now && !previous.has(spec.name)) {
              const forced = stillHeld.some((held) => below(spec, held))
              expect(forced || tokensWithPrevious > run.maxTokens, `newly withheld "${spec.name}"`).toBe(true)
            }
            if (!now && movable(spec) && previous.has(spec.name)) {
              expect(plan.promptTokens, `restored "${spec.name}"`).toBeLessThanOrEqual(run.maxTokens * (1 - run.headroom))
            }
          }
        }),
      ),
      { numRuns },
    )
  })

  it('(c) the withheld sections always equal what the plain greedy model chooses', () => {
    fc.assert(
      fc.property(runArb, (run) =>
        drive(run, ({ specs, plan, model }) => {
          expect(plan.withheld).toEqual(specs.filter((spec) => model.withheld.has(spec.name)).map((spec) => spec.name))
          expect(plan.rendered.text).toBe(model.text)
          expect(plan.overBudget).toBe(model.overBudget)
        }),
      ),
      { numRuns },
    )
  })

  it('(d) fractional counts: the decision equals the greedy model on exact sums, and promptTokens is the exact sum rounded once', () => {
    // A tenth of a token per character, and maxTokens on the same grid, so a
    // prompt often fits exactly: any drift would withhold or keep one part too many.
    const tenths = (text: string): number => text.length * 0.1
    // The exact sum of the counts (doubles are integers once scaled by 2^70 at
    // these sizes), rounded once to the nearest double.
    const SCALE = 2 ** 70
    const exactTotal = (texts: readonly string[]): number => {
      let sum = 0n
      texts.forEach((text, i) => {
        sum += BigInt(tenths(text) * SCALE) + (i > 0 ? BigInt(tenths('\n\n') * SCALE) : 0n)
      })
      return Number(sum) / SCALE
    }
    const fractionalRun = runArb.chain((run) => fc.integer({ min: 1, max: 240 }).map((tenthsOfMax) => ({ ...run, maxTokens: tenthsOfMax / 10 })))
    fc.assert(
      fc.property(fractionalRun, (run) =>
        drive(
          run,
          ({ specs, plan, model }) => {
            expect(plan.withheld).toEqual(specs.filter((spec) => model.withheld.has(spec.name)).map((spec) => spec.name))
            expect(plan.overBudget).toBe(model.overBudget)
            expect(plan.promptTokens).toBe(exactTotal(plan.rendered.parts.map((part) => part.text)))
          },
          { countTokens: tenths, countPrompt: exactTotal },
        ),
      ),
      { numRuns },
    )
  })
})
