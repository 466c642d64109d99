/**
 * Whether the alternation of `npm run bench` charges promptloom for the
 * reference's garbage: promptloom's churn batch right after a reference
 * batch against the same batch right after one of a second promptloom
 * world, interleaved in one process (A: reference, promptloom; B: the other
 * promptloom, promptloom; A, B, …), batches of ~80 ms as the bench runs them:
 *
 *   npx tsx bench/partner.ts [G=200] [rounds=20]
 */
import { nextTurn } from './measure.js'
import { buildWorld, churnStep as churn, promptloom, reference } from './workload.js'
import { median } from './median.js'

type Step = () => Promise<unknown>

/** The mean ms of `step` over a batch of about `ms` milliseconds. */
async function batch(step: Step, ms: number): Promise<number> {
  const started = performance.now()
  let count = 0
  while (performance.now() - started < ms) {
    await step()
    count++
  }
  return (performance.now() - started) / count
}

const [G = '200', roundsArg = '20'] = process.argv.slice(2)
const rounds = Number(roundsArg)
const referenceStep = churn(await buildWorld(reference, { G: Number(G), A: 100 }))
const otherStep = churn(await buildWorld(promptloom, { G: Number(G), A: 100 }))
const ownStep = churn(await buildWorld(promptloom, { G: Number(G), A: 100 }))
for (let i = 0; i < 200; i++) {
  await ownStep()
  await otherStep()
}
for (let i = 0; i < 20; i++) await referenceStep()
await nextTurn()
const afterReference: number[] = []
const afterPromptloom: number[] = []
const references: number[] = []
for (let round = 0; round < rounds; round++) {
  references.push(await batch(referenceStep, 80))
  afterReference.push(await batch(ownStep, 80))
  await batch(otherStep, 80)
  afterPromptloom.push(await batch(ownStep, 80))
}
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`
const slower = afterReference.filter((ms, i) => ms > afterPromptloom[i]!).length
console.log(
  `G=${G}: reference ${us(median(references))}; promptloom after a reference batch ${us(median(afterReference))}, after a promptloom batch ${us(median(afterPromptloom))}; slower after the reference in ${slower}/${rounds} rounds`,
)
process.exit(0)
