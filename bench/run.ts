/**
 * `npm run bench` — promptloom against the recompute-everything reference
 * (test/reference), side by side in one process, reported as ratios.
 * `npm run bench -- --quick` runs a reduced set.
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Context, Service } from 'cordis'
import { interpolate } from '../src/assembly/template.js'
import { scopeTarget } from '../src/index.js'
import { referenceInterpolate } from '../test/reference/index.js'
import { compare, measure } from './measure.js'
import { buildWorkload, promptloom, reference, type Workload } from './workload.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 5 : 9
const TIME = quick ? 40 : 80

interface Row {
  scenario: string
  reference_ms?: number
  promptloom_ms?: number
  ratio?: number
  target?: string
  pass?: boolean
  note?: string
  /** Shown in the ratio column instead of `ratio` (e.g. a percentage). */
  display?: string
  /** Shown in the contender columns instead of a time (e.g. bytes). */
  reference_text?: string
  promptloom_text?: string
}
const rows: Row[] = []

function report(row: Row): void {
  rows.push(row)
  process.stdout.write(`${JSON.stringify(row)}\n`)
}

function fmt(ms: number | undefined): string {
  if (ms === undefined) return ''
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`
}

/**
 * Builds the workload on both implementations and warms each up with two
 * full rounds over every agent, so every scope's first (cold) assembly is
 * behind us and the measured batches see the steady state.
 */
async function pair(build: (w: Workload) => () => unknown, G: number, A: number): Promise<[() => unknown, () => unknown, () => Promise<void>]> {
  const ref = await buildWorkload(reference, { G, A })
  const pl = await buildWorkload(promptloom, { G, A })
  const fns = [build(ref), build(pl)] as const
  for (const fn of fns) for (let i = 0; i < 2 * A; i++) await fn()
  return [fns[0], fns[1], async () => { await ref.dispose(); await pl.dispose() }]
}

function roundRobin(w: Workload): () => Promise<number> {
  let n = 0
  return () => w.step(w.agents[n++ % w.agents.length])
}

async function steadyScenario(G: number, A: number, target?: number): Promise<void> {
  const [ref, pl, done] = await pair(roundRobin, G, A)
  const result = await compare({ name: 'reference', fn: ref }, { name: 'promptloom', fn: pl }, ROUNDS, TIME)
  await done()
  report({
    scenario: `steady G=${G} A=${A}`,
    reference_ms: result.means.reference,
    promptloom_ms: result.means.promptloom,
    ratio: result.ratio,
    ...(target === undefined ? {} : { target: `≥ ${target}×`, pass: result.ratio >= target }),
  })
}

async function churnScenario(): Promise<void> {
  const build = (w: Workload) => {
    let n = 0
    const live: (() => unknown)[] = []
    return () => {
      const i = n++ % w.agents.length
      live.push(w.impl.service(w.scopes[1 + i]!.ctx).section({ name: `churn-${n}`, order: 1000 + (n % 97), text: `Churn ${n} uses {{model}}.` }))
      if (live.length > 8) live.shift()!()
      return w.step(w.agents[i])
    }
  }
  const [ref, pl, done] = await pair(build, 200, 100)
  const result = await compare({ name: 'reference', fn: ref }, { name: 'promptloom', fn: pl }, ROUNDS, TIME)
  await done()
  report({ scenario: 'churn G=200 A=100', reference_ms: result.means.reference, promptloom_ms: result.means.promptloom, ratio: result.ratio, target: '≥ 5×', pass: result.ratio >= 5 })
}

/**
 * One signal variable changes every step. `turn` is referenced from two
 * system-prompt sections (so the ~180 KB prompt string must be rebuilt every
 * step) and from a runtime context; `contextTurn` only from a context (the
 * placement the stability lint recommends), so the prompt string survives.
 */
async function signalScenario(variable: 'turn' | 'contextTurn', label: string, target?: number): Promise<void> {
  const build = (w: Workload) => {
    let n = 0
    return () => {
      w[variable].value = String(++n)
      return w.step(w.agents[n % w.agents.length])
    }
  }
  const [ref, pl, done] = await pair(build, 200, 100)
  const result = await compare({ name: 'reference', fn: ref }, { name: 'promptloom', fn: pl }, ROUNDS, TIME)
  await done()
  report({
    scenario: `signal G=200 A=100 (${label})`,
    reference_ms: result.means.reference,
    promptloom_ms: result.means.promptloom,
    ratio: result.ratio,
    ...(target === undefined ? {} : { target: `≥ ${target}×`, pass: result.ratio >= target }),
  })
}

async function registrationScenario(): Promise<void> {
  const build = (w: Workload) => {
    let n = 0
    const sp = w.impl.service(w.scopes[1]!.ctx)
    return () => {
      const dispose = sp.section({ name: `registered-${n++}`, order: 7, text: 'A short-lived section.' })
      return dispose()
    }
  }
  const [ref, pl, done] = await pair(build, 200, 10)
  const result = await compare({ name: 'reference', fn: ref }, { name: 'promptloom', fn: pl }, ROUNDS, TIME)
  await done()
  report({ scenario: 'registration (section + dispose)', reference_ms: result.means.reference, promptloom_ms: result.means.promptloom, ratio: result.ratio, target: '≥ 0.8×', pass: result.ratio >= 0.8 })
}

/** The least an assemble() of this shape can cost: a service method that runs two empty waterfalls. */
const EVENTS = Symbol('events')
class Floor extends Service {
  // A symbol key: `this` in a service method is Cordis' proxy, where # fields fail.
  readonly [EVENTS]: { waterfall(...args: unknown[]): unknown }
  constructor(ctx: Context) {
    super(ctx, 'floor')
    this[EVENTS] = (ctx.events as unknown as Record<symbol, { waterfall(...args: unknown[]): unknown }>)[Symbol.for('cordis.original')]!
  }
  async assemble(context: { scope?: object } = {}): Promise<object> {
    const events = this[EVENTS]
    const carrier = scopeTarget(this, context.scope)
    const preparation = await events.waterfall(carrier, 'bench/prepare', {}, context, () => Promise.resolve({}))
    return events.waterfall(carrier, 'bench/assemble', preparation, context, () => Promise.resolve(preparation)) as Promise<object>
  }
}

async function floorScenario(): Promise<void> {
  const app = new Context()
  await app.plugin(Floor)
  const root = app as unknown as { floor: Floor }
  const key = {}
  const floor = await measure({ name: 'floor', fn: () => root.floor.assemble({ scope: key }) }, ROUNDS, TIME)
  report({ scenario: 'floor (service method + two empty waterfalls)', promptloom_ms: floor, note: 'baseline, not a contender' })
}

/**
 * promptloom's own cost at G=1000 against G=50 (A=100), measured side by
 * side like every ratio here, so machine noise hits both sizes alike.
 */
async function scalingScenario(): Promise<void> {
  const large = await buildWorkload(promptloom, { G: 1000, A: 100 })
  const small = await buildWorkload(promptloom, { G: 50, A: 100 })
  const fns = [roundRobin(large), roundRobin(small)] as const
  for (const fn of fns) for (let i = 0; i < 200; i++) await fn()
  const result = await compare({ name: 'G=1000', fn: fns[0] }, { name: 'G=50', fn: fns[1] }, ROUNDS, TIME)
  await large.dispose()
  await small.dispose()
  report({ scenario: 'promptloom scaling: steady G=1000 / G=50 (A=100)', ratio: result.ratio, target: '≤ 4×', pass: result.ratio <= 4 })
}

function templateScenario(): void {
  const medians: Record<string, number> = {}
  const unit = 'Read {{model}} notes carefully before acting. '
  const vars = { model: 'm' }
  for (const [label, text] of [
    ['1 MB with references', unit.repeat(Math.ceil(1_000_000 / unit.length))],
    ['5 MB with references', unit.repeat(Math.ceil(5_000_000 / unit.length))],
    ['100k "{{" without "}}"', '{{ not a reference '.repeat(100_000)],
  ] as const) {
    // Alternate the two on every repetition; report each one's median.
    const runs = { ref: [] as number[], pl: [] as number[] }
    const once = (fn: () => string): number => {
      const start = performance.now()
      const out = fn()
      // Read a character: a rope must be flattened, as any consumer would.
      out.charCodeAt(out.length >> 1)
      return performance.now() - start
    }
    for (let i = 0; i < (quick ? 7 : 11); i++) {
      runs.ref.push(once(() => referenceInterpolate(text, vars, 'prompt section "big"')))
      runs.pl.push(once(() => interpolate(text, vars, 'prompt section "big"')))
    }
    const mid = (times: number[]): number => times.sort((a, b) => a - b)[times.length >> 1]!
    const ref = mid(runs.ref)
    const pl = mid(runs.pl)
    medians[label] = pl
    report({ scenario: `template: ${label} (first render)`, reference_ms: ref, promptloom_ms: pl, ratio: ref / pl })
  }
  const scale = medians['5 MB with references']! / medians['1 MB with references']!
  report({ scenario: 'template scaling: promptloom 5 MB / 1 MB', ratio: scale, note: 'linear is 5×' })
}

function memoryScenario(): void {
  const count = quick ? 2000 : 10000
  const script = fileURLToPath(new URL('./memory.ts', import.meta.url))
  const run = (impl: string) =>
    JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script, impl, String(count)], { encoding: 'utf8' }),
    ) as { perScopeBytes: number; afterDisposeGrowth: number }
  const ref = run('reference')
  const pl = run('promptloom')
  const ratio = pl.perScopeBytes / ref.perScopeBytes
  report({ scenario: `memory per live scope (${count} scopes, 3 sections, assembled once)`, reference_text: `${(ref.perScopeBytes / 1024).toFixed(1)} KiB`, promptloom_text: `${(pl.perScopeBytes / 1024).toFixed(1)} KiB`, ratio, target: '≤ 2× (promptloom/reference)', pass: ratio <= 2 })
  report({ scenario: 'memory after disposing every scope (heap vs baseline)', reference_text: `${(ref.afterDisposeGrowth * 100).toFixed(2)} %`, promptloom_text: `${(pl.afterDisposeGrowth * 100).toFixed(2)} %`, display: `${(pl.afterDisposeGrowth * 100).toFixed(2)} %`, target: '≤ +2 %', pass: pl.afterDisposeGrowth <= 0.02 })
}

const started = performance.now()
const sizes: [number, number, number?][] = quick
  ? [[50, 100], [200, 100, 30], [1000, 100, 30]]
  : [[50, 1], [50, 100], [200, 1], [200, 100, 30], [1000, 1, 30], [1000, 100, 30]]
for (const [G, A, target] of sizes) await steadyScenario(G, A, target)
await churnScenario()
await signalScenario('turn', 'in 2 sections + a context', 10)
await signalScenario('contextTurn', 'in a context only')
await registrationScenario()
await floorScenario()
await scalingScenario()
templateScenario()
memoryScenario()

const table = rows.map((row) => ({
  scenario: row.scenario,
  reference: row.reference_text ?? fmt(row.reference_ms),
  promptloom: row.promptloom_text ?? fmt(row.promptloom_ms),
  ratio: row.display ?? (row.ratio === undefined ? '' : `${row.ratio.toFixed(row.ratio < 10 ? 2 : 1)}×`),
  target: row.target ?? '',
  result: row.pass === undefined ? (row.note ?? '') : row.pass ? 'pass' : 'MISS',
}))
console.table(table)
console.log(`ratios are reference / promptloom from alternating batches in one run (${ROUNDS} rounds of ~${TIME} ms); ${((performance.now() - started) / 1000).toFixed(1)} s in all`)
