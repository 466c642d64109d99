/**
 * `npx tsx bench/budget.ts` — what the cache-preserving token budget costs per
 * step: G=200 parts of 200–1500 characters, a real BPE tokenizer
 * (gpt-tokenizer), and a maxTokens that withholds a few sections. Each
 * scenario runs the budgeted step (build the unbudgeted RenderedPrompt, plan,
 * commit) side by side with building the unbudgeted RenderedPrompt alone;
 * the ratio is budgeted / unbudgeted (target: the steady step within 2×).
 * `--quick` runs fewer, shorter rounds.
 */
import { countTokens } from 'gpt-tokenizer'
import { buildRenderedPrompt, type PartInput, type RenderedPrompt } from '../src/render/rendered-prompt.js'
import { TokenBudget } from '../src/surface/budget.js'
import { compare, measure } from './measure.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 5 : 9
const TIME = quick ? 40 : 80
const G = 200

const WORDS = (
  'the agent must read files before editing them and keep every change small; run the tests after each edit, ' +
  'report failures with the command that reproduces them, prefer existing helpers, never push or rewrite history, ' +
  'ask before deleting anything outside the workspace; tools: bash read write grep glob; the repository uses strict ' +
  'TypeScript, ESM only, Node 20, vitest; errors start lowercase, quote the subject, state the rule, give the way out'
).split(' ')

/** A deterministic PRNG (mulberry32), so every run measures the same prompt. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function textOf(next: () => number, index: number, length: number): string {
  let text = `## section ${index}\n`
  while (text.length < length) text += `${WORDS[Math.floor(next() * WORDS.length)]!} `
  return text.slice(0, length).trimEnd()
}

const next = random(16)
const inputs: PartInput[] = Array.from({ length: G }, (_, i) => ({
  name: `section-${i}`,
  text: textOf(next, i, 200 + Math.floor(next() * 1301)),
  layer: 'global',
  origin: 'registry',
  stability: i < 150 ? 'static' : i < 190 ? 'session' : 'volatile',
  variables: [],
  cacheBreakpoint: i === 149,
  required: i < 5,
  complete: false,
  priority: Math.floor(next() * 5),
  substitutions: [],
}))

let calls = 0
const counted = (text: string): number => {
  calls++
  return countTokens(text)
}

const full = buildRenderedPrompt(inputs)
const fullTokens = countTokens(full.text)
const maxTokens = Math.floor(fullTokens * 0.97)

function warmBudget(): TokenBudget {
  const budget = new TokenBudget({ maxTokens, countTokens: counted })
  budget.commit(budget.plan(buildRenderedPrompt(inputs)))
  return budget
}

function fmt(ms: number): string {
  return `${(ms * 1000).toFixed(1)} µs`
}

const rows: string[] = []
function report(scenario: string, budgeted: number, unbudgeted: number, ratio: number, note: string): void {
  rows.push(`| ${scenario} | ${fmt(budgeted)} | ${fmt(unbudgeted)} | ${ratio.toFixed(2)}× | ${note} |`)
}

// 1. steady: an unchanged registry whose prompt is built again each step (no identity shortcut)
{
  const budget = warmBudget()
  const firstPlan = budget.plan(buildRenderedPrompt(inputs))
  calls = 0
  const result = await compare(
    { name: 'budgeted', fn: () => budget.commit(budget.plan(buildRenderedPrompt(inputs))) },
    { name: 'unbudgeted', fn: () => buildRenderedPrompt(inputs) },
    ROUNDS,
    TIME,
  )
  const steadyCalls = calls
  report(
    'steady step, prompt rebuilt',
    result.means.budgeted!,
    result.means.unbudgeted!,
    result.ratio,
    `withholds ${firstPlan.withheld.length} of ${G}; countTokens calls over all steady steps: ${steadyCalls}`,
  )
}

// 2. steady: the memoized render hands the same RenderedPrompt object back
{
  const budget = warmBudget()
  const same: RenderedPrompt = buildRenderedPrompt(inputs)
  budget.commit(budget.plan(same))
  const result = await compare(
    { name: 'budgeted', fn: () => budget.commit(budget.plan(same)) },
    { name: 'unbudgeted', fn: () => buildRenderedPrompt(inputs) },
    ROUNDS,
    TIME,
  )
  report('steady step, same prompt object (render memo hit)', result.means.budgeted!, result.means.unbudgeted!, result.ratio, 'plan + commit alone vs one build')
}

// 3. one volatile part changes every step: one new text to count per step
{
  const budget = warmBudget()
  const changing = [...inputs]
  let tick = 0
  const step = (): PartInput[] => {
    tick++
    changing[195] = { ...inputs[195]!, text: `${inputs[195]!.text} (step ${tick})` }
    return changing
  }
  calls = 0
  const result = await compare(
    { name: 'budgeted', fn: () => budget.commit(budget.plan(buildRenderedPrompt(step()))) },
    { name: 'unbudgeted', fn: () => buildRenderedPrompt(step()) },
    ROUNDS,
    TIME,
  )
  report('one volatile part changed per step', result.means.budgeted!, result.means.unbudgeted!, result.ratio, `one countTokens call per budgeted step (${calls} calls in all)`)
}

// 4. for scale: tokenizing the whole joined prompt on every step instead
{
  const whole = await measure({ name: 'count joined text', fn: () => countTokens(full.text) }, ROUNDS, TIME)
  const build = await measure({ name: 'unbudgeted', fn: () => buildRenderedPrompt(inputs) }, ROUNDS, TIME)
  report('naive: countTokens(joined text) + build', whole + build, build, (whole + build) / build, 'what per-part caching avoids')
}

const budget = warmBudget()
const plan = budget.plan(full)
const summed = inputs.reduce((sum, input) => sum + countTokens(input.text), 0) + (G - 1) * countTokens('\n\n')
console.log(`token budget bench: G=${G} parts of 200–1500 characters, ${full.text.length} characters, ${fullTokens} tokens (gpt-tokenizer countTokens of the joined text)`)
console.log(`count rule (parts + separators): ${summed} tokens (${summed - fullTokens >= 0 ? '+' : ''}${summed - fullTokens} vs the joined text); maxTokens ${maxTokens} withholds ${plan.withheld.length}: ${plan.withheld.join(', ')}`)
console.log('')
console.log('| scenario | budgeted step | unbudgeted build | ratio | note |')
console.log('|---|---|---|---|---|')
for (const row of rows) console.log(row)
console.log('')
console.log(`ratios are medians over ${ROUNDS} alternating rounds of ~${TIME} ms (bench/measure.ts)`)
