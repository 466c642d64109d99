import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScope, render, renderPrompt, SystemPrompt, type PromptAssembly } from '../../src/index.js'

// With nobody listening to `system-prompt/assemble`, an assemble() result's
// sections array is built without the waterfall (src/assembly/pipeline.ts). This
// drives such a result and an eagerly built twin (the same registry, with a
// pass-through assemble listener, so its sections are a plain data
// property) through the same reads and edits — spread, JSON, structuredClone,
// Object.keys, in-place edits of the array and its sections, assignment,
// deletion — and requires every observation, and the rendered prompt, to be
// the same; a later assembly must never see an edit.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

type Op =
  | { readonly kind: 'observe'; readonly how: 'spread' | 'json' | 'clone' | 'keys' | 'isArray' | 'length' | 'descriptorKeys' }
  | { readonly kind: 'edit-text'; readonly index: number; readonly text: string }
  | { readonly kind: 'push'; readonly name: string; readonly text: string }
  | { readonly kind: 'splice'; readonly index: number }
  | { readonly kind: 'reverse' }
  | { readonly kind: 'assign'; readonly texts: readonly string[] }
  | { readonly kind: 'delete' }
  | { readonly kind: 'render' }

const text = fc.constantFrom('plain', 'uses {{who}}', '', 'other {{who}} text', 'x')
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('observe' as const), how: fc.constantFrom('spread', 'json', 'clone', 'keys', 'isArray', 'length', 'descriptorKeys') }),
  fc.record({ kind: fc.constant('edit-text' as const), index: fc.nat(8), text }),
  fc.record({ kind: fc.constant('push' as const), name: fc.constantFrom('p', 'q'), text }),
  fc.record({ kind: fc.constant('splice' as const), index: fc.nat(8) }),
  fc.record({ kind: fc.constant('reverse' as const) }),
  fc.record({ kind: fc.constant('assign' as const), texts: fc.array(text, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const) }),
  fc.record({ kind: fc.constant('render' as const) }),
)

type Loose = Record<string, unknown> & { sections?: { name: string; text: string; order?: number }[] }

function observe(assembly: Loose, how: Extract<Op, { kind: 'observe' }>['how']): unknown {
  switch (how) {
    case 'spread':
      return JSON.stringify({ ...assembly })
    case 'json':
      return JSON.stringify(assembly)
    case 'clone':
      return JSON.stringify(structuredClone(assembly))
    case 'keys':
      return Object.keys(assembly)
    case 'isArray':
      return Array.isArray(assembly.sections)
    case 'length':
      return assembly.sections?.length
    case 'descriptorKeys':
      return Object.entries(Object.getOwnPropertyDescriptors(assembly)).map(([key, d]) => [key, d.enumerable, d.configurable])
  }
}

/** Applies `op` to `assembly`; returns what it observed (an error message counts as an observation). */
function apply(assembly: Loose, op: Op): unknown {
  try {
    switch (op.kind) {
      case 'observe':
        return observe(assembly, op.how)
      case 'edit-text': {
        const section = assembly.sections?.[op.index]
        if (section !== undefined) section.text = op.text
        return section?.name
      }
      case 'push':
        return assembly.sections?.push({ name: op.name, order: 0, text: op.text })
      case 'splice':
        return assembly.sections?.splice(op.index, 1).map((s) => s.name)
      case 'reverse':
        return assembly.sections?.reverse().map((s) => s.name)
      case 'assign':
        assembly.sections = op.texts.map((t, i) => ({ name: `a${i}`, text: t }))
        return assembly.sections.length
      case 'delete':
        return delete assembly.sections
      case 'render':
        return render(assembly as unknown as PromptAssembly).text === renderPrompt(assembly as unknown as PromptAssembly)
          ? render(assembly as unknown as PromptAssembly).text
          : 'render and renderPrompt disagree'
    }
  } catch (error) {
    return `error: ${(error as Error).message}`
  }
}

async function world(listened: boolean) {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  let ctx!: Context
  await app.inject(['systemPrompt'], (injected) => {
    ctx = injected
  })
  const sp = ctx.systemPrompt
  const note = signal('signal note {{who}}')
  const who = signal('me')
  sp.variable('who', who)
  sp.section({ name: 'a', order: 1, text: 'first {{who}}' })
  sp.section({ name: 'b', order: 2, text: () => 'function text' })
  sp.section({ name: 'c', order: 3, text: note, interpolate: false })
  sp.section({ name: 'd', order: 4, text: 'last' })
  const key = { name: 'agent' }
  const scope = createScope(ctx, key)
  scope.ctx.systemPrompt.section({ name: 'e', order: 0, text: 'agent {{who}}' })
  if (listened) app.on('system-prompt/assemble', (presentation, _context, next) => next())
  return { app, key, who }
}

describe('the sections of an assemble() result with and without a listener', () => {
  it('behave like a plain array under reads, copies and in-place edits, and never leak into a later assembly', async () => {
    const deferred = await world(false)
    const eager = await world(true)
    const assemble = async (w: { app: Context; key: object }, scoped: boolean): Promise<Loose> =>
      (await w.app.systemPrompt.assemble(scoped ? { scope: w.key } : {})) as unknown as Loose
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.constantFrom('me', 'you', 'x', 'me2', ''), fc.array(op, { maxLength: 12 }), async (scoped, value, ops) => {
        deferred.who.value = value
        eager.who.value = value
        const mine = await assemble(deferred, scoped)
        const theirs = await assemble(eager, scoped)
        for (const step of ops) expect(apply(mine, step)).toEqual(apply(theirs, step))
        expect(JSON.stringify(mine)).toBe(JSON.stringify(theirs))
        const [again, twin] = [await assemble(deferred, scoped), await assemble(eager, scoped)]
        expect(JSON.stringify(again)).toBe(JSON.stringify(twin))
        const memoized = render(again as unknown as PromptAssembly)
        expect(memoized.text).toBe(render(twin as unknown as PromptAssembly).text)
        // The memoized parts (reused across renders) place and explain like a render from scratch.
        const fresh = render({ ...again } as unknown as PromptAssembly)
        const placed = (r: typeof fresh) => r.parts.map(({ name, text, start, end, variables, substitutions }) => ({ name, text, start, end, variables, substitutions }))
        expect(placed(memoized)).toEqual(placed(fresh))
        expect(memoized.blocks.map((b) => b.text).join('\n\n')).toBe(memoized.text)
      }),
      { numRuns },
    )
  })
})
