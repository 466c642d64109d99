/**
 * Memory in the realistic world (bench/workload.ts), run in a child process
 * with `--expose-gc` (one process per implementation, so neither sees the
 * other's heap): the retained heap per live agent — its scope, its
 * registrations, whatever the engine memoizes for it, and what its loop keeps
 * (last prompt and snapshot) after one step — and the heap after disposing
 * every agent.
 *
 *   node --expose-gc --import tsx bench/memory.ts <reference|promptloom> <agents> [G]
 */
import { buildWorld, IMPLS } from './workload.js'

const [implName = 'promptloom', countArg = '1000', globalsArg = '50'] = process.argv.slice(2)
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

const world = await buildWorld(found, { G, A: 0 })
async function mint(): Promise<void> {
  for (let i = 0; i < count; i++) await world.step(world.addAgent())
}

// One full cycle first: the baseline then includes what any run keeps for
// good (optimized code, grown hash-table capacities), so what remains after
// the measured cycle is what the agents themselves left behind.
await mint()
await world.disposeAgents()
const baseline = await settle()
await mint()
const live = await settle()
await world.disposeAgents()
const after = await settle()
process.stdout.write(
  JSON.stringify({
    impl: found.name,
    agents: count,
    G,
    baselineBytes: baseline,
    perAgentBytes: (live - baseline) / count,
    afterDisposeBytes: after,
    afterDisposeGrowth: (after - baseline) / baseline,
  }) + '\n',
)
