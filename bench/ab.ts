/**
 * promptloom at a git revision against the working tree, in one process, in
 * alternating rounds, so load on a shared machine hits both alike (separate
 * runs on a busy machine differ by more than most changes do):
 *
 *   npx tsx bench/ab.ts <rev> [steady|churn|churn-blocks|signal|changed|registration] [G=200] [A=100] [rounds=10] [steps=3000]
 *
 * extracts `src`, `bench` and `test/reference` of <rev> into the OS temp
 * directory (with a link to this tree's node_modules), builds the realistic
 * world of bench/workload.ts on each, and prints each side's median and best
 * µs per step and the median of the per-round ratios (rev / working tree).
 */
import { execSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as current from './workload.js'
import { median } from './median.js'

type Workload = typeof current
const SCENARIOS = ['steady', 'churn', 'churn-blocks', 'signal', 'changed', 'registration']
const [rev, scenario = 'steady', G = '200', A, rounds = '10', steps = '3000'] = process.argv.slice(2)
if (rev === undefined) throw new Error('usage: npx tsx bench/ab.ts <rev> [scenario] [G] [A] [rounds] [steps]; name a git revision to compare against')
if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario "${scenario}"; known: ${SCENARIOS.join(', ')}`)
const agents = Number(A ?? (scenario === 'registration' ? 10 : 100))

/** The workload module of `rev`, extracted once per commit. */
async function workloadAt(revision: string): Promise<Workload> {
  const root = resolve(import.meta.dirname, '..')
  const commit = execSync(`git rev-parse ${revision}`, { cwd: root, encoding: 'utf8' }).trim()
  const dir = join(tmpdir(), `promptloom-ab-${commit}`)
  if (!existsSync(join(dir, 'bench', 'workload.ts'))) {
    mkdirSync(dir, { recursive: true })
    execSync(`git archive ${commit} src bench test/reference | tar -x -C ${JSON.stringify(dir)}`, { cwd: root })
  }
  const modules = join(dir, 'node_modules')
  if (!existsSync(modules)) {
    // A link left behind by a tree that is gone (existsSync follows it) is replaced.
    rmSync(modules, { force: true })
    symlinkSync(join(root, 'node_modules'), modules, 'dir')
  }
  return (await import(pathToFileURL(join(dir, 'bench', 'workload.ts')).href)) as Workload
}

/** One warmed step function of `scenario` on `workload`'s promptloom. */
async function stepper(workload: Workload): Promise<() => Promise<unknown>> {
  const w = await workload.buildWorld(workload.promptloom, { G: Number(G), A: agents })
  const count = w.agents.length
  const registrar = workload.promptloom.service(w.agents[0]!.scope.ctx)
  const live: (() => unknown)[] = []
  let i = 0
  const step = async (): Promise<unknown> => {
    const agent = w.agents[i % count]!
    i++
    if (scenario === 'registration') return registrar.section({ name: `registered-${i}`, order: 7, text: 'A short-lived section.' })()
    if (scenario === 'churn' || scenario === 'churn-blocks') {
      // The current tree's churn registration, made through `rev`'s world (both speak the same service).
      current.churnRegistry(w, agent, i, live)
    }
    if (scenario === 'signal') w.turn.value = String(i)
    if (scenario === 'changed') agent.notes.value = `Progress note ${i}.`
    return w.step(agent, scenario === 'changed' || scenario === 'churn-blocks' ? 'blocks' : 'text')
  }
  for (let k = 0; k < count * 3; k++) await step()
  return step
}

const sides = { [rev]: await stepper(await workloadAt(rev)), 'working tree': await stepper(current) }
const times: Record<string, number[]> = { [rev]: [], 'working tree': [] }
const perRound = Number(steps)
for (let round = 0; round < Number(rounds); round++) {
  const order = round % 2 === 0 ? [rev, 'working tree'] : ['working tree', rev]
  for (const name of order) {
    const step = sides[name]!
    for (let k = 0; k < perRound / 10; k++) await step()
    const start = performance.now()
    for (let k = 0; k < perRound; k++) await step()
    times[name]!.push(((performance.now() - start) / perRound) * 1000)
  }
}
const fmt = (name: string): string => `${name} median ${median(times[name]!).toFixed(1)} µs (best ${Math.min(...times[name]!).toFixed(1)})`
const ratios = times[rev]!.map((t, k) => t / times['working tree']![k]!)
console.log(`${scenario} G=${G} A=${agents}: ${fmt(rev)}, ${fmt('working tree')}; ${rev} / working tree ${median(ratios).toFixed(2)}×`)
