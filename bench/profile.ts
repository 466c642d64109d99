/**
 * Profiling harness: runs one scenario for promptloom alone, for
 * `node --cpu-prof --import tsx bench/profile.ts <scenario> <G> <A> <steps>`.
 */
import { buildWorkload, promptloom } from './workload.js'

const [scenario = 'steady', G = '1000', A = '100', steps = '3000'] = process.argv.slice(2)
const w = await buildWorkload(promptloom, { G: Number(G), A: Number(A) })
let n = 0
const live: (() => unknown)[] = []
let start = performance.now()
const warm = Number(process.env.WARM ?? w.agents.length * 3)
for (let i = -warm; i < Number(steps); i++) {
  if (i === 0) start = performance.now()
  const agent = ((i % w.agents.length) + w.agents.length) % w.agents.length
  if (scenario === 'signal') w.turn.value = String(i)
  if (scenario === 'churn') {
    live.push(w.impl.service(w.scopes[1 + agent]!.ctx).section({ name: `churn-${n++}`, order: 1000 + (n % 97), text: `Churn ${n} uses {{model}}.` }))
    if (live.length > 8) live.shift()!()
  }
  await w.step(w.agents[agent])
}
const elapsed = performance.now() - start
console.log(`${scenario} G=${G} A=${A}: ${((elapsed / Number(steps)) * 1000).toFixed(1)} µs/step`)
const sp = (w.app as unknown as { systemPrompt: { stats(): unknown } }).systemPrompt
console.log(sp.stats())
