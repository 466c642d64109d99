/**
 * What a dropped benchmark world leaves on the heap, with and without a turn
 * of the event loop after it (see `nextTurn` in bench/measure.ts):
 *
 *   node --expose-gc --import tsx bench/retention.ts [promptloom|reference] [G=200] [steps=200]
 *
 * builds five worlds one after another (A=100, `steps` round-robin steps
 * each), disposes each one's scopes and drops it, and prints the heap after
 * a full GC following each. Without a turn, a loop of resolved promises never
 * drains its microtask queue, so every WeakRef target created or
 * dereferenced since it started stays alive (ECMAScript's KeepDuringJob).
 */
import { nextTurn } from './measure.js'
import { buildWorld, promptloom, reference } from './workload.js'

const [name = 'promptloom', G = '200', steps = '200'] = process.argv.slice(2)
const impl = name === 'reference' ? reference : promptloom
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc --import tsx bench/retention.ts')
const collect = gc

function heapMb(): string {
  collect()
  collect()
  return (process.memoryUsage().heapUsed / 1048576).toFixed(1)
}

async function dropWorld(): Promise<void> {
  const w = await buildWorld(impl, { G: Number(G), A: 100 })
  for (let i = 0; i < Number(steps); i++) await w.step(w.agents[i % w.agents.length]!)
  await w.dispose()
}

for (const turn of [false, true]) {
  const heap = [heapMb()]
  for (let k = 0; k < 5; k++) {
    await dropWorld()
    if (turn) await nextTurn()
    heap.push(heapMb())
  }
  console.log(`${impl.name} G=${G}, ${turn ? 'a turn of the event loop after each world' : 'no turn between worlds'}: heap MB after each dropped world ${heap.join(' → ')}`)
  await nextTurn()
}
