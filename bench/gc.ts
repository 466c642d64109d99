/**
 * What promptloom's churn step costs the garbage collector, in the
 * realistic world of bench/workload.ts (promptloom alone):
 *
 *   npx tsx bench/gc.ts [text|blocks|null] [G=200] [steps=5000]
 *
 * 1. GC time per step by kind (`PerformanceObserver` over `steps` measured
 *    churn steps, after as many warm ones): how often each kind ran and what
 *    one cost.
 * 2. What survives a step, by the function that allocated it: a sampling
 *    heap profile (an allocation every ~64 bytes) over one round of 100
 *    steps, read at its end, so what it lists is what the steps allocated and
 *    the world still holds (the agents' last prompts and render state), which
 *    is what each scavenge copies.
 *
 * `text` reads each prompt's `text` (one 128 KiB+ string a step, in V8's
 * large-object space); `blocks` reads its cache blocks instead; `null` runs
 * the null engine's churn step of bench/loop-floor.ts instead of
 * promptloom's (the GC any engine's churn step pays, for comparison).
 */
import { Session } from 'node:inspector/promises'
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { nullEngineStep } from './loop-floor.js'
import { buildWorld, churnRegistry, promptloom, type PromptRead } from './workload.js'

const [readArg = 'text', G = '200', stepsArg = '5000'] = process.argv.slice(2)
if (readArg !== 'text' && readArg !== 'blocks' && readArg !== 'null') throw new Error(`read "${readArg}": expected text, blocks or null`)
const read: PromptRead = readArg === 'blocks' ? 'blocks' : 'text'
const steps = Number(stepsArg)
const w = await buildWorld(promptloom, { G: Number(G), A: 100 })
const live: (() => unknown)[] = []
let sink = 0
if (readArg === 'null') for (const agent of w.agents) await w.step(agent)
const nullEngine = readArg === 'null' ? nullEngineStep(w) : undefined

async function churn(from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    if (nullEngine !== undefined) {
      await nullEngine.step()
      continue
    }
    const agent = w.agents[i % w.agents.length]!
    churnRegistry(w, agent, i, live)
    sink += await w.step(agent, read)
  }
}

// Node's GC entry kinds (perf_hooks constants).
const KINDS: Record<number, string> = { 1: 'scavenge', 2: 'minor mark-compact', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' }
const byKind = new Map<string, { ms: number; count: number }>()
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[(entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other'
    const total = byKind.get(kind) ?? { ms: 0, count: 0 }
    total.ms += entry.duration
    total.count++
    byKind.set(kind, total)
  }
})
await churn(0, steps)
observer.observe({ entryTypes: ['gc'] })
const started = performance.now()
await churn(steps, steps)
const elapsed = performance.now() - started
await new Promise((resolve) => setTimeout(resolve, 20))
observer.disconnect()
const cells = [...byKind].map(([kind, { ms, count }]) => `${kind} ${count}× ${((ms * 1000) / steps).toFixed(1)} µs/step (${(ms / count).toFixed(2)} ms each)`)
console.log(`${nullEngine === undefined ? 'churn' : 'null-engine churn'} G=${G} A=100 reading ${read}: ${((elapsed * 1000) / steps).toFixed(1)} µs/step over ${steps} steps; GC: ${cells.join(' · ')}`)

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: SamplingNode[]
}
const session = new Session()
session.connect()
await session.post('HeapProfiler.enable')
await session.post('HeapProfiler.collectGarbage')
await session.post('HeapProfiler.startSampling', { samplingInterval: 64 })
const round = w.agents.length
await churn(2 * steps, round)
const { profile } = (await session.post('HeapProfiler.getSamplingProfile')) as unknown as { profile: { head: SamplingNode } }
await session.post('HeapProfiler.stopSampling')
session.disconnect()
const bySite = new Map<string, number>()
let total = 0
// tsx reports line 0 for every function of a transformed file: a line is shown only when known.
const frame = ({ callFrame: { functionName, url, lineNumber } }: SamplingNode) =>
  `${functionName || '(anonymous)'} ${url.split('/').pop()}${lineNumber > 0 ? `:${lineNumber + 1}` : ''}`
const walk = (node: SamplingNode, path: string[]) => {
  const here = [...path, frame(node)]
  if (node.selfSize > 0) {
    const site = here.slice(-3).reverse().join(' < ')
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    total += node.selfSize
  }
  for (const child of node.children) walk(child, here)
}
walk(profile.head, [])
console.log(`still held after a round of ${round} steps: ${(total / round / 1024).toFixed(1)} KiB per step, by allocating site (innermost first):`)
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${(bytes / round).toFixed(0).padStart(8)} B/step  ${site}`)
for (const dispose of live.splice(0)) await dispose()
nullEngine?.close()
await w.dispose()
if (sink < 0) throw new Error('unreachable')
