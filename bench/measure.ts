/**
 * Side-by-side measurement on tinybench: the two implementations run in
 * alternating short batches in one process (A B, B A, A B, …), so machine
 * noise hits both alike; each round yields one mean per implementation and
 * the reported ratio is the median of the per-round ratios.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Bench } from 'tinybench'
import { median } from './median.js'

export interface Contender {
  readonly name: string
  readonly fn: () => unknown
}

export interface Comparison {
  /** Median over rounds of each contender's mean latency, in milliseconds. */
  readonly means: Record<string, number>
  /** Median over rounds of first.mean / second.mean. */
  readonly ratio: number
  readonly rounds: number
}

/**
 * Resolves on a later turn of the event loop; every comparison and
 * measurement starts with one, and a full collection. A real agent loop
 * awaits its model call every step, so its microtask queue drains between
 * steps; a benchmark loop of resolved promises never does, and V8 keeps
 * every WeakRef target created or dereferenced in it alive until the queue
 * drains (ECMAScript's KeepDuringJob). promptloom holds views and registries
 * by WeakRef (render slots, parent-link watchers), so without a turn every
 * world built in the run stayed alive to its end, and each later row ran on
 * a heap that held all of them. Within one comparison the batches run back
 * to back: a turn before every batch lets V8 run its posted GC tasks between
 * batches, outside the measured time (in one full run the G=1000 null-engine
 * floor then read twice promptloom's whole churn step). (`node --expose-gc
 * --import tsx bench/retention.ts` shows the heap after each dropped world,
 * with and without a turn between worlds.)
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

// A full collection between scenarios, so each starts on a heap without the
// last one's garbage (up to two G=1000 worlds holding 85 MB of prompt texts
// each): exposed for this process only, as `node --expose-gc` would.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

/** A turn of the event loop (see `nextTurn`), then a full collection. */
async function settle(): Promise<void> {
  await nextTurn()
  collectGarbage()
}

async function meanOf(contender: Contender, time: number): Promise<number> {
  const bench = new Bench({ time, iterations: 3, warmup: false, throws: true })
  bench.add(contender.name, contender.fn)
  await bench.run()
  const result = bench.tasks[0]!.result
  if (result.state !== 'completed') throw new Error(`${contender.name}: benchmark ${result.state}`)
  return result.latency.mean
}

/**
 * With `--rounds` on the command line (`npm run bench -- --rounds`), every
 * comparison prints its per-round means before its row: a median hides
 * whether a contender drifted across the rounds, or one round caught a long
 * collection.
 */
const showRounds = process.argv.includes('--rounds')

function printRounds(firstName: string, firsts: readonly number[], secondName: string, seconds: readonly number[]): void {
  const cells = (values: readonly number[]) => values.map((ms) => (ms * 1000).toFixed(0)).join(' ')
  const heap = (process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)
  console.log(`rounds, µs per call: ${firstName} ${cells(firsts)} | ${secondName} ${cells(seconds)} (heap ${heap} MiB after the last)`)
}

/**
 * Runs `first` and `second` for `rounds` alternating batches of about
 * `time` ms each (after one discarded warm-up round) and compares them.
 */
export async function compare(first: Contender, second: Contender, rounds: number, time: number): Promise<Comparison> {
  await settle()
  await meanOf(first, time)
  await meanOf(second, time)
  const firsts: number[] = []
  const seconds: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < rounds; round++) {
    let a: number
    let b: number
    if (round % 2 === 0) {
      a = await meanOf(first, time)
      b = await meanOf(second, time)
    } else {
      b = await meanOf(second, time)
      a = await meanOf(first, time)
    }
    firsts.push(a)
    seconds.push(b)
    ratios.push(a / b)
  }
  if (showRounds) printRounds(first.name, firsts, second.name, seconds)
  return { means: { [first.name]: median(firsts), [second.name]: median(seconds) }, ratio: median(ratios), rounds }
}

/** Runs one contender alone (for baselines such as the floor). */
export async function measure(contender: Contender, rounds: number, time: number): Promise<number> {
  await settle()
  await meanOf(contender, time)
  const means: number[] = []
  for (let round = 0; round < rounds; round++) means.push(await meanOf(contender, time))
  return median(means)
}
