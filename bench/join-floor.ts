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
export async function joinFloorScenario(G: number, rounds: number, time: number, referenceChurnMs: number | undefined): Promise<void> {
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
    note: 'the reference joins it too; ceiling = reference churn step / this join',
  })
}
