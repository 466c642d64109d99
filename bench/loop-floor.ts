/**
 * The floor under a churn step that no engine can go below: everything the
 * churn step of bench/run.ts does outside the prompt engine, in the
 * benchmark world itself (same heap, same Cordis app, same loop), with a
 * null engine in place of promptloom:
 *
 *   - the loop's two Cordis service reads (`scope.ctx.systemPrompt`, then
 *     `app.systemPrompt`), as the churn step makes them;
 *   - one bare Cordis effect started in the agent's scope and the one started
 *     8 steps earlier disposed (every registration is a Cordis effect, by
 *     contract, started with `ctx.fiber.effect`, what `ctx.effect` resolves
 *     to, as promptloom starts it);
 *   - the agent's prompt text built fresh (its own section texts, one slot
 *     replaced, joined) and held as the agent's last prompt until its next
 *     step, with its runtime-context snapshot, as the loop holds them; the
 *     loop reads the text.
 *
 * What the null engine leaves out is exactly the engine's work: assembling,
 * rendering, the snapshot, the registry. It runs in alternating batches
 * against promptloom's own churn step (a second world), so both meet the same
 * heap and the same collector: `reference churn / this` is the highest churn
 * ratio any engine could reach in this run, and `promptloom − this` is
 * promptloom's own share of its churn step.
 */
import { compare } from './measure.js'
import { report } from './report.js'
import { buildWorld, promptloom, type PromptRead, type World } from './workload.js'

/**
 * The null engine's churn step on `w` (a world already stepped once per
 * agent, so each agent holds a `RenderedPrompt` whose part texts it reuses),
 * with `held`, the texts it keeps as the agents' last prompts, and `close`,
 * which disposes its live effects (and checks what the steps read).
 *
 * `read` is what the loop reads, as in the churn rows: `'text'` joins the
 * whole prompt; `'blocks'` rebuilds only the cache block holding the changed
 * part (its parts' texts concatenated, as promptloom builds a block) and reads
 * every block, the way a provider request built from `render()` blocks does.
 */
export function nullEngineStep(w: World, read: PromptRead = 'text'): { step: () => Promise<void>; held: readonly string[]; close: () => void } {
  const prompts = w.agents.map((agent) => {
    const prompt = agent.prompt
    if (prompt === undefined || typeof prompt === 'string') throw new Error('loop floor: an agent has no RenderedPrompt')
    return prompt
  })
  const texts = prompts.map((prompt) => prompt.parts.map((part) => part.text))
  const blocks = prompts.map((prompt) => prompt.blocks.map((block) => block.text))
  const snapshots = w.agents.map((agent) => agent.snapshot ?? '')
  const held: string[] = w.agents.map(() => '')
  const root = w.app as unknown as Record<string, unknown>
  const live: (() => unknown)[] = []
  const slot = texts[0]!.length >> 1
  // The block holding the changed part, as the part range [from, to).
  let from = 0
  let changed = 0
  for (; from + prompts[0]!.blocks[changed]!.parts.length <= slot; changed++) from += prompts[0]!.blocks[changed]!.parts.length
  const to = from + prompts[0]!.blocks[changed]!.parts.length
  let n = 0
  let sink = 0
  const step = async () => {
    const index = n++ % w.agents.length
    const agent = w.agents[index]!
    const scoped = (agent.scope.ctx as unknown as Record<string, unknown>).systemPrompt
    live.push(agent.scope.ctx.fiber.effect(() => () => undefined, 'systemPrompt.section()'))
    if (live.length > 8) live.shift()!()
    const service = root.systemPrompt
    const own = texts[index]!
    own[slot] = `Churn ${n} uses the model.`
    if (read === 'text') {
      const text = own.join('\n\n')
      held[index] = text
      sink += text.length + text.charCodeAt(text.length >> 1)
    } else {
      let text = own[from]!
      for (let j = from + 1; j < to; j++) text = text + '\n\n' + own[j]!
      blocks[index]![changed] = text
      held[index] = text
      for (const block of blocks[index]!) sink += block.length + block.charCodeAt(block.length >> 1)
    }
    sink += snapshots[index]!.length + (scoped === service ? 1 : 0)
  }
  const close = () => {
    for (const dispose of live.splice(0)) dispose()
    if (sink < 0) throw new Error('unreachable')
  }
  return { step, held, close }
}

/**
 * Reports the null-engine churn step at `G` beside promptloom's churn step
 * (`churn` on a world of its own), and the ceiling against the reference's
 * churn step `referenceMs` of the churn row.
 */
export async function loopFloorScenario(
  G: number,
  rounds: number,
  time: number,
  referenceMs: number | undefined,
  churn: (w: World) => () => Promise<unknown>,
  read: PromptRead = 'text',
): Promise<void> {
  const w = await buildWorld(promptloom, { G, A: 100 })
  const own = await buildWorld(promptloom, { G, A: 100 })
  const churnStep = churn(own)
  for (const agent of w.agents) await w.step(agent)
  const { step, held, close } = nullEngineStep(w, read)
  for (let i = 0; i < 2 * w.agents.length; i++) await step()
  for (let i = 0; i < 2 * own.agents.length; i++) await churnStep()
  const result = await compare({ name: 'null engine', fn: step }, { name: 'promptloom', fn: churnStep }, rounds, time)
  close()
  await w.dispose()
  await own.dispose()
  const floor = result.means['null engine']!
  const ours = result.means.promptloom!
  const kb = (held[0]!.length / 1024).toFixed(0)
  report({
    scenario:
      read === 'text'
        ? `floor: a churn step with a null engine (Cordis reads, a bare Cordis effect, the ${kb} KiB text joined and held; G=${G}, in the benchmark world), alternating with promptloom's churn step`
        : `floor: a churn step with a null engine reading blocks (Cordis reads, a bare Cordis effect, the ${kb} KiB block holding the change rebuilt, every block read; G=${G}), alternating with promptloom's churn step reading blocks`,
    reference_ms: ours,
    promptloom_ms: floor,
    ...(referenceMs === undefined ? {} : { ratio: referenceMs / floor, display: `${(referenceMs / floor).toFixed(1)}× ceiling` }),
    target: 'baseline',
    note: `left: promptloom's churn step beside it; ceiling = the churn row's reference step / the null engine's; promptloom's own share: ${((ours - floor) * 1000).toFixed(0)} µs`,
  })
}
