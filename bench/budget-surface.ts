/**
 * The token budget through the real step surface, in the realistic world of
 * bench/workload.ts (G=200, one agent): each step assembles the agent's
 * prompt and records it on a step surface with a budget (gpt-tokenizer's
 * countTokens, a maxTokens that withholds a few sections) and on one without,
 * side by side; the ratio is budgeted / unbudgeted (target: the steady step
 * within 2×). `npm run bench` runs it; `npx tsx bench/budget.ts` measures the
 * budget module alone.
 */
import { countTokens } from 'gpt-tokenizer'
import { createStepSurface, render, type StepSurface } from '../src/index.js'
import { compare } from './measure.js'
import { report } from './report.js'
import { buildWorld, promptloom, type World } from './workload.js'

const G = 200

/** Steps `surface` for the world's only agent; `change` runs first (a registry change, or nothing). */
function stepper(w: World, surface: StepSurface, change: () => void): () => Promise<number> {
  const agent = w.agents[0]!
  return async () => {
    change()
    const result = surface.step({ assembly: await w.app.systemPrompt.assemble({ scope: agent.key }) })
    return result.stablePrefixLength
  }
}

/** Reports the steady and the changed-section rows of the budgeted surface against the unbudgeted one. */
export async function budgetSurfaceScenario(rounds: number, time: number): Promise<void> {
  const w = await buildWorld(promptloom, { G, A: 1 })
  const agent = w.agents[0]!
  const full = render(await w.app.systemPrompt.assemble({ scope: agent.key }))
  const maxTokens = Math.floor(countTokens(full.text) * 0.97)
  let calls = 0
  const counted = (text: string): number => {
    calls++
    return countTokens(text)
  }
  const budgeted = createStepSurface({ budget: { maxTokens, countTokens: counted } })
  const unbudgeted = createStepSurface()
  const steady = [stepper(w, budgeted, () => {}), stepper(w, unbudgeted, () => {})] as const
  for (let i = 0; i < 20; i++) for (const fn of steady) await fn()
  const withheld = budgeted.step({ assembly: await w.app.systemPrompt.assemble({ scope: agent.key }) }).withheld ?? []

  calls = 0
  const result = await compare({ name: 'budgeted', fn: steady[0] }, { name: 'unbudgeted', fn: steady[1] }, rounds, time)
  report({
    scenario: `budget: steady step through the surface, G=${G} (gpt-tokenizer, maxTokens ${maxTokens} withholds ${withheld.length}; unbudgeted in the reference column)`,
    reference_ms: result.means.unbudgeted,
    promptloom_ms: result.means.budgeted,
    ratio: result.ratio,
    display: `${result.ratio.toFixed(2)}× (budgeted/unbudgeted)`,
    target: '≤ 2×',
    pass: result.ratio <= 2,
    note: `countTokens calls over all steady steps: ${calls}`,
  })
  if (calls !== 0) throw new Error(`the budgeted steady step called countTokens ${calls} times; an unchanged registry must not be tokenized again`)

  // One signal referenced from two kept sections changes every step: two new texts to count, the kept prompt rebuilt.
  let n = 0
  const turn = (): void => {
    w.turn.value = String(++n)
  }
  const changed = [stepper(w, budgeted, turn), stepper(w, unbudgeted, turn)] as const
  calls = 0
  const moving = await compare({ name: 'budgeted', fn: changed[0] }, { name: 'unbudgeted', fn: changed[1] }, rounds, time)
  report({
    scenario: `budget: a per-step signal in 2 kept sections, G=${G} (budgeted vs unbudgeted surface)`,
    reference_ms: moving.means.unbudgeted,
    promptloom_ms: moving.means.budgeted,
    ratio: moving.ratio,
    display: `${moving.ratio.toFixed(2)}× (budgeted/unbudgeted)`,
    target: 'none set',
    note: `counts only the changed sections' texts (${calls} countTokens calls in all)`,
  })
  await w.dispose()
}
