/**
 * Run by hidden-classes.test.ts under `node --allow-natives-syntax`: prints,
 * for each kind of object a step hands out, whether two of them (from two
 * agents) are in fast mode and share one hidden class, as JSON.
 */
import { Context } from 'cordis'
import { createScope, render, SystemPrompt } from '../../src/index.js'

const fast = new Function('a', 'return %HasFastProperties(a)') as (value: unknown) => boolean
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean

// Some other code's objects with `text` and `sections` accessors on the plain empty map, before
// ours exist: our kinds must not share (and fight over) that map's transitions.
for (const key of ['text', 'sections']) Object.defineProperty({}, key, { get: () => key, enumerable: true })

const app = new Context()
await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
const keys = [{ name: 'agent-1' }, { name: 'agent-2' }]
await app.inject(['systemPrompt'], (ctx) => {
  ctx.systemPrompt.section({ name: 'head', order: 0, text: 'The shared head.', cacheBreakpoint: true })
  ctx.systemPrompt.section({ name: 'tail', order: 10, text: 'The shared tail.' })
  ctx.systemPrompt.context({ name: 'env', order: 0, text: 'An environment.' })
  for (const key of keys) createScope(ctx, key).ctx.systemPrompt.section({ name: 'own', order: 5, text: `I am ${key.name}.` })
})
const sp = (app as unknown as { systemPrompt: SystemPrompt }).systemPrompt
const assemblies = [await sp.assemble({ scope: keys[0] }), await sp.assemble({ scope: keys[1] })] as const
const prompts = [render(assemblies[0]), render(assemblies[1])] as const
const report: Record<string, { fast: boolean; shared: boolean }> = {}
const probe = (kind: string, a: unknown, b: unknown) => void (report[kind] = { fast: fast(a) && fast(b), shared: sameMap(a, b) })
probe('assembly', assemblies[0], assemblies[1])
probe('prompt', prompts[0], prompts[1])
probe('block', prompts[0].blocks[1], prompts[1].blocks[1])
probe('part', prompts[0].parts[0], prompts[1].parts[0])
process.stdout.write(JSON.stringify(report))
