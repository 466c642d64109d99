/**
 * Where one churn step's time goes, phase by phase, for both implementations
 * in the realistic world (bench/workload.ts), without a profiler (whose
 * sampling inflates short functions and moves the GC around):
 *
 *   npx tsx bench/phases.ts [G=200] [A=100]
 *
 * A churn step as `npm run bench` runs it: the loop reads the stepped agent's
 * `scope.ctx.<service>` (a Cordis service read), registers a section through
 * it, disposes the registration made 8 steps earlier, reads the app's service
 * (another Cordis read), assembles, renders, renders the context snapshot and
 * reads the text (length and one character, so the join happens). Each phase
 * is timed with `performance.now()` around it and averaged over the measured
 * steps (after as many unmeasured ones); the GC lands in whichever phase
 * triggered it, mostly the text read. promptloom runs twice (before and
 * after the reference), so drift in the host shows.
 */
import { buildWorld, churnSection, promptloom, reference, type Impl } from './workload.js'

const [G = '200', A = '100'] = process.argv.slice(2)

const PHASES = ['service read (scope)', 'section()', 'dispose', 'service read (app)', 'assemble', 'render', 'snapshot', 'text read', 'step'] as const

async function phases(impl: Impl, steps: number): Promise<void> {
  const w = await buildWorld(impl, { G: Number(G), A: Number(A) })
  const live: (() => unknown)[] = []
  const totals = new Array<number>(PHASES.length).fill(0)
  let sink = 0
  for (let i = 0; i < 2 * steps; i++) {
    const agent = w.agents[i % w.agents.length]!
    const at = [performance.now()]
    const scoped = impl.service(agent.scope.ctx)
    at.push(performance.now())
    live.push(scoped.section(churnSection(i)))
    at.push(performance.now())
    if (live.length > 8) live.shift()!()
    at.push(performance.now())
    const service = impl.service(w.app)
    at.push(performance.now())
    const assembly = await service.assemble({ scope: agent.key })
    at.push(performance.now())
    const prompt = impl.render(assembly)
    at.push(performance.now())
    const snapshot = impl.renderContextSnapshot(assembly)
    at.push(performance.now())
    const text = typeof prompt === 'string' ? prompt : prompt.text
    sink += text.length + text.charCodeAt(text.length >> 1) + snapshot.length
    at.push(performance.now())
    // Kept as the loop keeps them, so the heap is the benchmark's.
    agent.prompt = prompt
    agent.snapshot = snapshot
    if (i < steps) continue
    for (let p = 0; p < PHASES.length - 1; p++) totals[p]! += at[p + 1]! - at[p]!
    totals[PHASES.length - 1]! += at[at.length - 1]! - at[0]!
  }
  await w.dispose()
  if (sink < 0) throw new Error('unreachable')
  const cells = PHASES.map((phase, p) => `${phase} ${((totals[p]! * 1000) / steps).toFixed(1)}`)
  console.log(`${impl.name.padEnd(10)} G=${G} A=${A}, µs per churn step over ${steps} steps: ${cells.join(' · ')}`)
}

await phases(promptloom, 5000)
await phases(reference, 500)
await phases(promptloom, 5000)
