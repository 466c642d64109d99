/**
 * Memory scenario, run in a child process with `--expose-gc` (one process
 * per implementation, so neither sees the other's heap): retained heap per
 * live scope with 3 sections (each scope assembled once, as a live agent
 * would be), and the heap after disposing every scope.
 *
 *   node --expose-gc --import tsx bench/memory.ts <reference|promptloom> <scopes>
 */
import { createScope, type Scope } from '../src/index.js'
import { IMPLS, mount } from './workload.js'

const [implName = 'promptloom', countArg = '10000'] = process.argv.slice(2)
const found = IMPLS.find((candidate) => candidate.name === implName)
if (found === undefined) throw new Error(`unknown implementation "${implName}"; known: reference, promptloom`)
const impl = found
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')
const count = Number(countArg)

/** Heap used after the event loop drained and several full collections (weak tables clear over more than one). */
async function settle(): Promise<number> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    gc!()
  }
  return process.memoryUsage().heapUsed
}

const { ctx, sp } = await mount(impl)
sp.section({ name: 'global', order: 1, text: 'A global section that every agent sees.' })
sp.variable('model', 'bench-model')
sp.variable('cwd', '/work')
async function mint(): Promise<Scope[]> {
  const scopes: Scope[] = []
  for (let i = 0; i < count; i++) {
    const key = { name: `agent-${i}` }
    const scope = createScope(ctx, key)
    const scoped = impl.service(scope.ctx)
    for (let s = 0; s < 3; s++) scoped.section({ name: `agent-section-${s}`, order: 10 + s, text: `Agent ${i} section ${s}.` })
    impl.renderPrompt(await sp.assemble({ scope: key }))
    scopes.push(scope)
  }
  return scopes
}

// One full cycle first: the baseline then includes what any run keeps for
// good (optimized code, grown hash-table capacities), so what remains after
// the measured cycle is what the scopes themselves left behind.
for (const scope of await mint()) await scope.dispose()
const baseline = await settle()
let scopes = await mint()
const live = await settle()
for (const scope of scopes) await scope.dispose()
scopes = []
const after = await settle()
process.stdout.write(
  JSON.stringify({
    impl: impl.name,
    scopes: count,
    baselineBytes: baseline,
    perScopeBytes: (live - baseline) / count,
    afterDisposeBytes: after,
    afterDisposeGrowth: (after - baseline) / baseline,
  }) + '\n',
)
