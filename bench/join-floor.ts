/**
 * The floor under every changed step whose loop reads `prompt.text`: V8
 * builds a flat string over ~128 KiB in its large-object space, which costs
 * several times more per byte than a smaller one (fresh pages each time).
 * Measured in the benchmark world itself, on a stepped agent's parts, so
 * the heap and the GC are the ones the churn and signal rows run in; the
 * reference joins the same text once per step too.
 */
import { measure } from './measure.js'
import { report } from './report.js'
import { buildWorld, promptloom } from './workload.js'

/**
 * Reports the cost of joining a G-section prompt (what a step that changed
 * the prompt pays to hand its loop `text`), and the highest churn ratio a
 * step costing only that join could reach against `referenceChurnMs`.
 */
export async function joinFloorScenario(G: number, rounds: number, time: number, referenceChurnMs: number | undefined, row = 'churn'): Promise<void> {
  const w = await buildWorld(promptloom, { G, A: 100 })
  for (const agent of w.agents) await w.step(agent)
  const prompt = w.agents[1]!.prompt
  if (prompt === undefined || typeof prompt === 'string') throw new Error('join floor: the agent has no RenderedPrompt')
  const texts = prompt.parts.map((part) => part.text)
  let sink = 0
  const join = () => {
    const text = texts.join('\n\n')
    sink += text.charCodeAt(text.length >> 1)
  }
  const ms = await measure({ name: 'join', fn: join }, rounds, time)
  await w.dispose()
  if (sink < 0) throw new Error('unreachable')
  const kb = (prompt.text.length / 1024).toFixed(0)
  report({
    scenario: `floor: joining the ${kb} KiB prompt text a changed step hands its loop (G=${G}, in the benchmark world)`,
    promptloom_ms: ms,
    ...(referenceChurnMs === undefined ? {} : { ratio: referenceChurnMs / ms, display: `${(referenceChurnMs / ms).toFixed(1)}× ceiling` }),
    target: 'baseline',
    note: `the reference joins it too; ceiling = reference ${row} step / this join`,
  })
}

/**
 * What the machine charges for memory the process has not touched yet: the
 * first write to each 4 KiB page of fresh 64 MiB buffers (the kernel maps
 * and zeroes it), per page, against a second write to the same pages. A
 * string over ~128 KiB lands on fresh pages of V8's large-object space every
 * time, so this is what makes the join floor above cost several times more
 * per byte than a smaller string.
 */
export function freshPageScenario(): void {
  const bytes = 64 * 1024 * 1024
  const pages = bytes / 4096
  let sink = 0
  let fresh = Infinity
  let again = Infinity
  for (let round = 0; round < 3; round++) {
    let start = performance.now()
    const buffer = new Uint8Array(new ArrayBuffer(bytes))
    for (let i = 0; i < bytes; i += 4096) buffer[i] = 1
    fresh = Math.min(fresh, (performance.now() - start) / pages)
    start = performance.now()
    for (let i = 0; i < bytes; i += 4096) buffer[i]! += 1
    again = Math.min(again, (performance.now() - start) / pages)
    sink += buffer[4096]!
  }
  if (sink < 0) throw new Error('unreachable')
  report({
    scenario: 'machine: first write to a fresh 4 KiB page (64 MiB buffers, best of 3) vs a second write',
    reference_text: `${(again * 1e6).toFixed(0)} ns`,
    promptloom_text: `${(fresh * 1e6).toFixed(0)} ns`,
    ratio: fresh / again,
    display: `${(fresh / again).toFixed(0)}× a touched page`,
    target: 'baseline',
    note: 'left column: a page already touched; right: a fresh one',
  })
}
