/**
 * Memory in the realistic world (bench/workload.ts), run in a child process
 * with `--expose-gc --no-flush-bytecode` (one process per implementation, so neither sees the
 * other's heap).
 *
 * Live mode (default): the retained heap per live agent — its scope, its
 * registrations, whatever the engine memoizes for it, and what its loop keeps
 * (last prompt and snapshot) after one step — and the heap after disposing
 * every agent.
 *
 *   node --expose-gc --no-flush-bytecode --import tsx bench/memory.ts <reference|promptloom> <agents> [G]
 *
 * Idle mode (promptloom only): `agents` agents each stepped once, then only
 * the first 10 stepped again for a few rounds (mostly idle agents); the
 * retained heap per agent with config `renderCacheScopes` at `limit`
 * (`Infinity`: every scope keeps its render state). `--drop` makes the idle
 * loops forget their last prompt and snapshot (a harness that parked them
 * elsewhere), so what the engine itself keeps per idle agent shows.
 *
 *   node --expose-gc --max-old-space-size=4096 --import tsx bench/memory.ts promptloom <agents> [G] --idle <limit> [--drop]
 */
import { SystemPrompt } from '../src/index.js'
import { buildWorld, IMPLS, PERSONA, promptloom, type Impl } from './workload.js'
import { median } from './median.js'

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const at = args.indexOf(name)
  return at < 0 ? undefined : (args.splice(at, 2)[1] ?? '')
}
const idleLimit = flag('--idle')
const drop = args.includes('--drop')
const [implName = 'promptloom', countArg = '1000', globalsArg = '50'] = args.filter((arg) => arg !== '--drop')
const found = IMPLS.find((candidate) => candidate.name === implName)
if (found === undefined) throw new Error(`unknown implementation "${implName}"; known: reference, promptloom`)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')
const count = Number(countArg)
const G = Number(globalsArg)

/** Heap used after the event loop drained and several full collections (weak tables clear over more than one). */
async function settle(): Promise<number> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    gc!()
  }
  return process.memoryUsage().heapUsed
}

if (idleLimit === undefined) {
  const world = await buildWorld(found, { G, A: 0 })
  const mint = async (): Promise<void> => {
    for (let i = 0; i < count; i++) await world.step(world.addAgent())
  }
  // The settled heap after a full cycle (mint, step, dispose every agent) climbs for the first
  // four or five cycles for either implementation (optimized code, grown table capacities) and then
  // settles (run with --no-flush-bytecode, so bytecode aging does not drop it at some cycle; the
  // figures are in docs/performance.md). So: four cycles first, then the growth compares the median
  // of the measured cycle and the two after it with the median of the three before it; a leak grows
  // with every cycle and so moves the medians apart.
  const settledAfterCycles = async (cycles: number): Promise<number[]> => {
    const heaps: number[] = []
    for (let cycle = 0; cycle < cycles; cycle++) {
      await mint()
      await world.disposeAgents()
      heaps.push(await settle())
    }
    return heaps
  }
  await settledAfterCycles(4)
  const before = await settledAfterCycles(3)
  const baseline = before[before.length - 1]!
  await mint()
  const live = await settle()
  await world.disposeAgents()
  const after = [await settle(), ...(await settledAfterCycles(2))]
  const growth = (median(after) - median(before)) / median(before)
  process.stdout.write(
    JSON.stringify({
      impl: found.name,
      agents: count,
      G,
      baselineBytes: baseline,
      perAgentBytes: (live - baseline) / count,
      beforeDisposeBytes: median(before),
      afterDisposeBytes: median(after),
      afterDisposeGrowth: growth,
    }) + '\n',
  )
} else {
  if (found !== promptloom) throw new Error('--idle measures promptloom only (the reference keeps no render state)')
  const limit = Number(idleLimit)
  const impl: Impl = { ...promptloom, load: (app) => app.plugin(SystemPrompt, { ...PERSONA, renderCacheScopes: limit }) }
  const world = await buildWorld(impl, { G, A: 0 })
  const ACTIVE = 10
  const run = async (agents: number): Promise<void> => {
    for (let i = 0; i < agents; i++) {
      const agent = world.addAgent()
      await world.step(agent)
      if (drop) agent.prompt = agent.snapshot = undefined
    }
    for (let round = 0; round < 3; round++) for (const agent of world.agents.slice(0, ACTIVE)) await world.step(agent)
  }
  // One smaller warm-up cycle (optimized code, grown tables) before the baseline.
  await run(Math.min(count, 1000))
  await world.disposeAgents()
  const baseline = await settle()
  await run(count)
  const live = await settle()
  process.stdout.write(
    JSON.stringify({ impl: 'promptloom', mode: 'idle', agents: count, G, limit: String(limit), drop, active: ACTIVE, baselineBytes: baseline, perAgentBytes: (live - baseline) / count }) + '\n',
  )
  await world.dispose()
}
