/**
 * `npm run soak` — long-running churn with nothing lost (SPEC §2 Reliability).
 *
 *   node --expose-gc --import tsx bench/soak.ts [--ops 1000000] [--scopes 10000] [--pool 1000]
 *
 * 1,000,000 register/dispose operations across 10,000 scope keys: a pool of
 * live agent scopes under ten presets, each visit registering sections,
 * contexts, variables, tools, suppressors and a waterfall listener, assembling
 * and rendering, then disposing them one by one — and every few visits
 * disposing the whole scope and minting a fresh key in its place. Global and
 * preset registrations churn alongside, and a global signal variable keeps
 * changing.
 *
 * Prints heap used at the start (after a warm-up and GC), in the middle and
 * at the end (everything disposed, GC), and the Cordis effects and listeners
 * still alive beyond the baseline. Exits 1 when the final heap exceeds the
 * start by more than 10% or any effect or listener remains.
 */
import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import {
  createScope,
  renderContextSnapshot,
  renderPrompt,
  SystemPrompt,
  type Scope,
  type ToolProviderResult,
} from '../src/index.js'
import { census, growth, type Census } from '../test/reliability/census.js'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  console.error('run with node --expose-gc (npm run soak does)')
  process.exit(2)
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const OPS = option('ops', 1_000_000)
const SCOPES = option('scopes', 10_000)
const POOL = option('pool', 1_000)
const PRESETS = 10
/** Registrations per visit; as many disposals follow, so a visit is 2 × PER_VISIT operations. */
const PER_VISIT = 10
const VISITS = Math.ceil(OPS / (2 * PER_VISIT))
/** Visits of a pool slot between re-mints, so that the run goes through SCOPES keys. */
const REMINT_EVERY = Math.max(1, Math.floor(VISITS / SCOPES))

const MB = 1024 * 1024
const mb = (bytes: number): string => `${(bytes / MB).toFixed(2)} MB`

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 6; i++) {
    await new Promise((resolve) => setImmediate(resolve))
    gc!()
  }
  return process.memoryUsage().heapUsed
}

// ── the app ─────────────────────────────────────────────────────────────────

const app = new Context()
await app.plugin(SystemPrompt, { identity: 'You are {{model}}.', personaSuffix: 'Be brief.' })
let minter!: Context
await app.inject(['systemPrompt'], (ctx) => {
  minter = ctx
})
const model = signal('soak-model')
app.systemPrompt.variable('model', model)
app.systemPrompt.section({ name: 'intro', order: 0, text: 'Working in {{cwd}}.' })
const presetKeys = Array.from({ length: PRESETS }, (_, i) => ({ name: `preset-${i}` }))
const presets = presetKeys.map((key) => createScope(minter, key))
presets.forEach((preset, i) => preset.ctx.systemPrompt.variable('cwd', `/presets/${i}`))

const schemas: ToolProviderResult[] = Array.from({ length: 8 }, (_, i) => ({
  schemas: [{ name: `tool-${i}`, description: `tool ${i}`, parameters: { type: 'object' } }],
}))

interface Slot {
  key: { readonly name: string }
  scope: Scope
  visits: number
}

let serial = 0
let minted = 0
let ops = 0
let assemblies = 0

function mint(): Slot {
  const key = { name: `agent-${serial++}` }
  const scope = createScope(minter, key, { parent: presetKeys[serial % PRESETS]! })
  scope.ctx.on('system-prompt/assemble', async (presentation, _context, next) => {
    presentation.contexts.reverse()
    return next()
  })
  minted++
  return { key, scope, visits: 0 }
}

/** One visit: PER_VISIT registrations, an assembly and its renders, then PER_VISIT disposals. */
async function visit(slot: Slot, round: number): Promise<void> {
  const sp = slot.scope.ctx.systemPrompt
  const n = slot.visits++
  const disposers: (() => unknown)[] = [
    sp.section({ name: 'task', order: 1000, text: `Task ${n} of {{model}} in {{cwd}}.` }),
    sp.section({ name: 'intro', order: 0, text: () => `Agent ${slot.key.name}.` }),
    sp.section({ name: 'notes', order: 1500, text: model, interpolate: false }),
    sp.context({ name: 'job', order: 120, text: `job ${n}`, required: true }),
    sp.context({ name: 'disk', order: 110, text: () => 'disk ok' }),
    sp.variable('cwd', `/agents/${slot.key.name}`),
    sp.variable('branch', () => (n % 2 === 0 ? 'main' : undefined)),
    sp.tools(() => schemas[n % schemas.length]!),
    sp.suppressRuntimeContext(),
    // Global and preset layers churn too: every visit changes a view many scopes share.
    round % 2 === 0
      ? app.systemPrompt.section({ name: `global-${slot.key.name}`, order: 2000, text: 'G' })
      : presets[round % PRESETS]!.ctx.systemPrompt.context({ name: `preset-${slot.key.name}`, order: 130, text: 'P' }),
  ]
  ops += disposers.length
  const assembly = await app.systemPrompt.assemble({ scope: slot.key })
  renderPrompt(assembly)
  renderContextSnapshot(assembly)
  assemblies++
  if (n % 7 === 3) model.value = `soak-model-${round}`
  // The last visit before a re-mint leaves half its entries for the scope's own disposal.
  const remint = slot.visits % REMINT_EVERY === 0
  const individually = remint ? disposers.slice(0, PER_VISIT / 2) : disposers
  for (const dispose of individually) await dispose()
  ops += individually.length
  if (remint) {
    ops += disposers.length - individually.length
    // The global/preset registration is owned by the app or a preset, not by the scope.
    await disposers[disposers.length - 1]!()
    await slot.scope.dispose()
    Object.assign(slot, mint())
  }
}

/** Visits between two turns of the event loop. */
const YIELD_EVERY = 100

/**
 * Runs `visits` visits round-robin over `pool`, giving the event loop a turn
 * every YIELD_EVERY visits, as a harness does whenever it calls a model.
 * (A loop that never yields keeps every object a `WeakRef` was made for or
 * dereferenced alive until it does — V8 keeps them for the current job —
 * which the render slots' recency order would then pile up: README
 * "Limitations".)
 */
async function churn(visits: number, pool: Slot[], onHalf?: () => Promise<void>): Promise<void> {
  for (let i = 0; i < visits; i++) {
    await visit(pool[i % pool.length]!, Math.floor(i / pool.length))
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve))
    if (onHalf !== undefined && i === Math.floor(visits / 2)) await onHalf()
  }
}

/** Disposes every scope of `pool` and empties it, so the harness itself holds no disposed scope. */
async function disposeAll(pool: Slot[]): Promise<void> {
  for (const slot of pool.splice(0)) await slot.scope.dispose()
}

// ── warm-up, then the measured run ─────────────────────────────────────────

// The warm-up has the measured run's shape (a full pool, re-mints included) so
// that what any run keeps for good — optimized code, hash tables grown to the
// peak number of live keys — is in the baseline, and what remains after the
// measured run is what the churn itself left behind.
const warm = Array.from({ length: POOL }, mint)
await churn(Math.ceil(VISITS / 5), warm)
await disposeAll(warm)
model.value = 'soak-model'
const baseline: Census = census(app)
const start = await settledHeap()
ops = 0
minted = 0
assemblies = 0

const began = performance.now()
let middle = 0
const pool = Array.from({ length: POOL }, mint)
await churn(VISITS, pool, async () => {
  middle = await settledHeap()
})
await disposeAll(pool)
model.value = 'soak-model'
const wall = (performance.now() - began) / 1000
const end = await settledHeap()
const after = census(app)

// ── report ─────────────────────────────────────────────────────────────────

const extraEffects = after.effects - baseline.effects
const extraListeners = after.listeners - baseline.listeners
const extraFibers = after.fibers - baseline.fibers
const heapGrowth = (end - start) / start
console.log(`soak: ${ops.toLocaleString('en')} register/dispose operations, ${minted.toLocaleString('en')} scopes, ${assemblies.toLocaleString('en')} assemblies`)
console.log(`  wall time      ${wall.toFixed(1)} s (${Math.round(ops / wall).toLocaleString('en')} ops/s)`)
console.log(`  heap start     ${mb(start)}   (after warm-up and GC)`)
console.log(`  heap middle    ${mb(middle)}   (${POOL} live scopes)`)
console.log(`  heap end       ${mb(end)}   (${heapGrowth >= 0 ? '+' : ''}${(heapGrowth * 100).toFixed(1)}% vs start)`)
console.log(`  live effects   ${after.effects} (baseline ${baseline.effects}, extra ${extraEffects})`)
console.log(`  live listeners ${after.listeners} (baseline ${baseline.listeners}, extra ${extraListeners})`)
console.log(`  live fibers    ${after.fibers} (baseline ${baseline.fibers}, extra ${extraFibers}; scope fibers ${after.scopeFibers})`)

const failures: string[] = []
if (ops < OPS) failures.push(`only ${ops} operations ran (wanted ${OPS})`)
if (minted < SCOPES) failures.push(`only ${minted} scopes were minted (wanted ${SCOPES})`)
if (heapGrowth > 0.1) failures.push(`heap grew by ${(heapGrowth * 100).toFixed(1)}% (limit 10%)`)
if (extraEffects !== 0) failures.push(`effects left: ${JSON.stringify(growth(baseline.effectLabels, after.effectLabels))}`)
if (extraListeners !== 0) failures.push(`listeners left: ${JSON.stringify(growth(baseline.listenerNames, after.listenerNames))}`)
if (extraFibers !== 0) failures.push(`fibers left: ${extraFibers}`)
if (failures.length > 0) {
  console.error(`soak FAILED:\n  - ${failures.join('\n  - ')}`)
  process.exit(1)
}
console.log('soak passed: memory flat, nothing left behind')
