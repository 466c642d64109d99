/**
 * Profiles one scenario for promptloom alone in the realistic world
 * (bench/workload.ts) and prints the step's cost and the top 15 functions by
 * self time, then the top 20 by total time per step:
 *
 *   npx tsx bench/profile.ts <steady|churn|churn-blocks|signal|changed> <G> <A> <steps>
 *
 * profiles only the measured steps (after 3 warm rounds over the agents,
 * WARM=n to change) through node:inspector and writes the profile to
 * `promptloom-<scenario>-G<G>-A<A>.cpuprofile` in the OS temp directory.
 * Under `node --cpu-prof --import tsx bench/profile.ts …` it leaves the
 * profiling to Node (the whole run); summarize that file with
 * `npx tsx bench/cpu-profile.ts <file>`.
 */
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from 'node:inspector/promises'
import { summarizeProfile, summarizeTotals, type CpuProfile } from './cpu-profile.js'
import { buildWorld, churnRegistry, promptloom } from './workload.js'

const SCENARIOS = ['steady', 'churn', 'churn-blocks', 'signal', 'changed']
const [scenario = 'steady', G = '200', A = '100', steps = '20000'] = process.argv.slice(2)
if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario "${scenario}"; known: ${SCENARIOS.join(', ')}`)
const w = await buildWorld(promptloom, { G: Number(G), A: Number(A) })
const live: (() => unknown)[] = []
const count = w.agents.length

async function step(i: number): Promise<void> {
  const agent = w.agents[((i % count) + count) % count]!
  if (scenario === 'signal') w.turn.value = String(i)
  if (scenario === 'changed') agent.notes.value = `Progress note ${i}.`
  if (scenario === 'churn' || scenario === 'churn-blocks') {
    churnRegistry(w, agent, i, live)
  }
  await w.step(agent, scenario === 'changed' || scenario === 'churn-blocks' ? 'blocks' : 'text')
}

const warm = Number(process.env.WARM ?? count * 3)
for (let i = -warm; i < 0; i++) await step(i)
const external = process.execArgv.some((flag) => flag.startsWith('--cpu-prof'))
const session = external ? undefined : new Session()
if (session !== undefined) {
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
}
const start = performance.now()
for (let i = 0; i < Number(steps); i++) await step(i)
const elapsed = performance.now() - start
console.log(`${scenario} G=${G} A=${A}: ${((elapsed / Number(steps)) * 1000).toFixed(1)} µs/step over ${steps} steps`)
if (session !== undefined) {
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile }
  const file = join(tmpdir(), `promptloom-${scenario}-G${G}-A${A}.cpuprofile`)
  writeFileSync(file, JSON.stringify(profile))
  console.log(`${summarizeProfile(profile)}\n${summarizeTotals(profile, 20, Number(steps))}\n(profile written to ${file})`)
}
await w.dispose()
