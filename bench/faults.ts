/**
 * Minor page faults per churn step, promptloom's against the null engine's
 * (bench/loop-floor.ts), in alternating rounds on two worlds of the same
 * process: how many fresh pages each step touches beyond the ~44 of its
 * 175 KiB text (a fresh page costs 2.4–4 µs on this machine; see the
 * `machine` row of `npm run bench`):
 *
 *   npx tsx bench/faults.ts [G=200] [steps=3000] [rounds=3]
 */
import { nullEngineStep } from './loop-floor.js'
import { buildWorld, churnStep, promptloom } from './workload.js'

const [G = '200', stepsArg = '3000', roundsArg = '3'] = process.argv.slice(2)
const steps = Number(stepsArg)
const floorWorld = await buildWorld(promptloom, { G: Number(G), A: 100 })
for (const agent of floorWorld.agents) await floorWorld.step(agent)
const nullEngine = nullEngineStep(floorWorld)
const w = await buildWorld(promptloom, { G: Number(G), A: 100 })
const churn = churnStep(w)
let sink = 0
const promptloomStep = async () => {
  sink += await churn()
}
for (let i = 0; i < 1000; i++) {
  await nullEngine.step()
  await promptloomStep()
}
for (let round = 0; round < Number(roundsArg); round++) {
  const cells: string[] = []
  for (const [name, step] of [['null engine', nullEngine.step], ['promptloom', promptloomStep]] as const) {
    const faults = process.resourceUsage().minorPageFault
    const started = performance.now()
    for (let i = 0; i < steps; i++) await step()
    const elapsed = performance.now() - started
    cells.push(`${name} ${((elapsed * 1000) / steps).toFixed(0)} µs/step, ${((process.resourceUsage().minorPageFault - faults) / steps).toFixed(1)} minor faults/step`)
  }
  console.log(`G=${G} round ${round + 1}: ${cells.join(' · ')}`)
}
nullEngine.close()
await w.dispose()
await floorWorld.dispose()
if (sink < 0) throw new Error('unreachable')
