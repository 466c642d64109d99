/**
 * Rough figures for issue #15's authoring-safety features on a 1,000-section
 * global registry (20 variables, every section with one unknown reference,
 * every 50th section required): diagnostics() first, cached and after a
 * fixing registration, and assemble() with and without a listener whose
 * rewrite forces 20 required sections back.
 *
 *   npx tsx bench/safety.ts
 */
import { Context } from 'cordis'
import { SystemPrompt } from '../src/index.js'

const app = new Context()
await app.plugin(SystemPrompt, {})
const sp = app.systemPrompt
for (let i = 0; i < 20; i++) sp.variable(`v${i}`, `x${i}`)
for (let i = 0; i < 1000; i++) {
  sp.section({ name: `s${i}`, order: i, text: `text {{v${i % 20}}} more {{v${(i + 3) % 20}}} and {{nope}}`, required: i % 50 === 0 })
}
const ms = (start: number) => (performance.now() - start).toFixed(2)
let t = performance.now()
sp.diagnostics()
console.log(`diagnostics(), first call:            ${ms(t)} ms`)
t = performance.now()
for (let i = 0; i < 1000; i++) sp.diagnostics()
console.log(`diagnostics(), unchanged registry:    ${((performance.now() - t)).toFixed(1)} µs per call`)
sp.variable('nope', 'ok')
t = performance.now()
sp.diagnostics()
console.log(`diagnostics(), after a fixing change: ${ms(t)} ms`)
const perAssembly = async (label: string) => {
  for (let i = 0; i < 50; i++) await sp.assemble()
  t = performance.now()
  for (let i = 0; i < 500; i++) await sp.assemble()
  console.log(`${label} ${((performance.now() - t) / 0.5).toFixed(1)} µs per call`)
}
await perAssembly('assemble(), no listener:             ')
app.on('system-prompt/assemble', async (_p, _c, next) => {
  const result = await next()
  return { ...result, sections: result.sections.filter((s) => !s.name.endsWith('0')) }
})
await perAssembly('assemble(), 20 required restored:    ')
