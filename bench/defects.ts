/**
 * Figures for the issue #10 (part A) fixes, printed as a small table:
 *
 *   - assembling the deepest scope of a 10,000-deep parent chain: the first
 *     assembly, an unchanged one, and the first one after a global registration;
 *   - registering 20,000 signal-valued sections vs 20,000 string sections;
 *   - one write to a registered signal, with 100 and with 20,000 signal inputs
 *     registered (the write should cost the same).
 *
 * Run with `npx tsx bench/defects.ts`. Wall-clock figures on a shared machine:
 * read them as orders of magnitude. The unit tests prove the same properties by
 * counts (test/reliability/deep-chains.test.ts, signal-cost.test.ts).
 */
import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { bindScopeParent, SystemPrompt, type ScopeKey } from '../src/index.js'
import { median } from './median.js'

const CHAIN_DEPTH = 10_000
const SECTIONS = 20_000

async function mount(): Promise<Context> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  return app
}

function ms(start: number): string {
  return `${(performance.now() - start).toFixed(1)} ms`
}

const rows: [string, string][] = []

async function deepChain(): Promise<void> {
  const app = await mount()
  const keys: ScopeKey[] = [{ name: 'link-0' }]
  let start = performance.now()
  for (let i = 1; i < CHAIN_DEPTH; i++) {
    const key = { name: `link-${i}` }
    bindScopeParent(key, keys[i - 1]!)
    keys.push(key)
  }
  rows.push([`bind a ${CHAIN_DEPTH}-deep chain (bindScopeParent, for reference)`, ms(start)])
  const deepest = keys[CHAIN_DEPTH - 1]!
  start = performance.now()
  await app.systemPrompt.assemble({ scope: deepest })
  rows.push([`assemble its deepest scope, first time`, ms(start)])
  start = performance.now()
  await app.systemPrompt.assemble({ scope: deepest })
  rows.push([`assemble it again, nothing changed`, ms(start)])
  app.systemPrompt.section({ name: 'global', order: 1, text: 'a global section' })
  start = performance.now()
  const assembly = await app.systemPrompt.assemble({ scope: deepest })
  rows.push([`assemble it after a global registration`, ms(start)])
  if (!assembly.sections.some((section) => section.name === 'global')) throw new Error('the global section is missing')
}

async function registration(kind: 'signal' | 'string'): Promise<void> {
  const app = await mount()
  const texts = Array.from({ length: SECTIONS }, (_, i) => (kind === 'signal' ? signal(`text ${i}`) : `text ${i}`))
  const start = performance.now()
  texts.forEach((text, i) => app.systemPrompt.section({ name: `s${i}`, order: i, text }))
  rows.push([`register ${SECTIONS} ${kind} sections`, ms(start)])
}

async function write(inputs: number): Promise<void> {
  const app = await mount()
  const texts: Signal<string>[] = Array.from({ length: inputs }, (_, i) => signal(`text ${i}`))
  texts.forEach((text, i) => app.systemPrompt.section({ name: `s${i}`, order: i, text }))
  let heard = 0
  app.on('system-prompt/change', () => void heard++)
  const times: number[] = []
  const target = texts[inputs >> 1]!
  for (let i = 0; i < 2_000; i++) {
    const start = performance.now()
    target.value = `rewritten ${i}`
    times.push(performance.now() - start)
  }
  if (heard !== 2_000) throw new Error(`expected 2000 change events, heard ${heard}`)
  rows.push([`one signal write, ${inputs} signal inputs registered (median of 2000)`, `${(median(times) * 1000).toFixed(1)} µs`])
}

await deepChain()
await registration('string')
await registration('signal')
await write(100)
await write(SECTIONS)

const width = Math.max(...rows.map(([label]) => label.length))
for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`)
