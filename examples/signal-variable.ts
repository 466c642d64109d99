/**
 * A signal-driven prompt variable.
 *
 * `variable(name, signal)` subscribes the registry to the signal: writing a
 * new value emits `system-prompt/change` (once per `batch()`), and the next
 * render re-substitutes only the sections that reference the variable. The
 * stats() deltas show it: no structure recompute, one section render.
 *
 *   npx tsx examples/signal-variable.ts
 */
import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { batch, renderPrompt, SECTION_ORDERS, SystemPrompt } from '../src/index.js'

const app = new Context()
await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
const prompt = app.systemPrompt

const branch = signal('main')
prompt.variable('branch', branch, { stability: 'session' })
prompt.section({ name: 'guidance', order: SECTION_ORDERS.TOOL_GUIDANCE, text: 'Run the tests before you commit.' })
prompt.section({ name: 'repo', order: SECTION_ORDERS.HARNESS_SOURCE, text: 'You are on git branch {{branch}}.' })

let changes = 0
app.on('system-prompt/change', () => void changes++)

console.log(`before: ${renderPrompt(await prompt.assemble()).replace(/\n\n/g, ' | ')}`)
const before = prompt.stats()

branch.value = 'feature/login'
console.log(`change events after one write: ${changes}`)
batch(() => {
  branch.value = 'feature/a'
  branch.value = 'feature/login-v2'
})
console.log(`change events after a batch of two writes: ${changes}`)

console.log(`after: ${renderPrompt(await prompt.assemble()).replace(/\n\n/g, ' | ')}`)
const after = prompt.stats()
console.log(
  `delta: structureRecomputes ${after.structureRecomputes - before.structureRecomputes}, ` +
    `sectionRenders ${after.sectionRenders - before.sectionRenders}, ` +
    `renderCacheHits ${after.renderCacheHits - before.renderCacheHits}`,
)
