import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { createScope, SystemPrompt } from '../../src/index.js'

// A scope's section plan after registrations and disposals in its own layer,
// its parent's and the global one. Here one agent under a preset, both under
// a global layer, sees random batches of registrations and disposals in all
// three layers (names shared between layers, so entries shadow and un-shadow
// each other; equal orders, so the name breaks ties; static, function and
// signal texts; `complete` and `required` flags), and after every batch its
// assembled sections must equal a plain model: nearest layer wins a name,
// sorted by order then code-unit name.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)

const LAYERS = ['global', 'preset', 'agent'] as const
type LayerName = (typeof LAYERS)[number]
const NAMES = ['a', 'b', 'B', 'c', 'd', 'e', 'f', 'g'] as const
type TextKind = 'static' | 'function' | 'signal'

interface Registration {
  readonly layer: LayerName
  readonly name: string
  readonly order: number
  readonly kind: TextKind
  readonly text: Signal<string>
  readonly complete: boolean
  readonly required: boolean
  readonly dispose: () => unknown
}

type Op =
  | { readonly t: 'register'; readonly layer: LayerName; readonly name: string; readonly order: number; readonly kind: TextKind; readonly complete: boolean; readonly required: boolean }
  | { readonly t: 'dispose'; readonly pick: number }
  | { readonly t: 'write'; readonly pick: number; readonly text: string }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('register' as const),
      // Mostly the agent's own layer: that is the patched one.
      layer: fc.constantFrom<LayerName>('agent', 'agent', 'agent', 'preset', 'global'),
      name: fc.constantFrom(...NAMES),
      order: fc.integer({ min: 0, max: 4 }),
      kind: fc.constantFrom<TextKind>('static', 'static', 'function', 'signal'),
      complete: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      required: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('dispose' as const), pick: fc.nat(31) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('write' as const), pick: fc.nat(31), text: fc.constantFrom('x', 'y', '') }) },
)

// Batches of operations, assembled after each batch: a batch of several
// changes in the agent patches several entries at once (or merges again).
const batches = fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 })

/** The sections the agent's assembly must hold, from the live registrations alone. */
function expected(live: readonly Registration[]): { sections: [string, string][] } | { error: true } {
  const rank: Record<LayerName, number> = { global: 0, preset: 1, agent: 2 }
  const winners = new Map<string, Registration>()
  for (const entry of live) {
    const held = winners.get(entry.name)
    if (held === undefined || rank[entry.layer] > rank[held.layer]) winners.set(entry.name, entry)
  }
  const plan = [...winners.values()].sort((x, y) => x.order - y.order || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
  const complete = plan.filter((entry) => entry.complete)
  if (complete.length > 1) return { error: true }
  const shown = complete.length === 1 ? plan.filter((entry) => entry === complete[0] || entry.required) : plan
  return { sections: shown.map((entry) => [entry.name, entry.text.peek()]) }
}

it('a patched plan equals the merged model after random batches of registrations and disposals in the agent, its preset and the global layer', async () => {
  await fc.assert(
    fc.asyncProperty(batches, async (steps) => {
      const app = new Context()
      await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
      const preset = { name: 'preset' }
      const agent = { name: 'agent' }
      const services = {} as Record<LayerName, SystemPrompt>
      await app.inject(['systemPrompt'], (ctx) => {
        services.global = ctx.systemPrompt
        services.preset = createScope(ctx, preset).ctx.systemPrompt
        services.agent = createScope(ctx, agent, { parent: preset }).ctx.systemPrompt
      })
      const live: Registration[] = []
      let serial = 0
      for (const [index, batch] of steps.entries()) {
        for (const step of batch) {
          if (step.t === 'register') {
            if (live.some((entry) => entry.layer === step.layer && entry.name === step.name)) continue
            const text = signal(`${step.layer}:${step.name}:${serial++}`)
            const source = step.kind === 'static' ? text.peek() : step.kind === 'function' ? () => text.value : text
            const dispose = services[step.layer].section({ name: step.name, order: step.order, text: source, complete: step.complete, required: step.required })
            live.push({ ...step, text, dispose })
          } else if (step.t === 'dispose') {
            if (live.length === 0) continue
            live.splice(step.pick % live.length, 1)[0]!.dispose()
          } else {
            const dynamic = live.filter((entry) => entry.kind !== 'static')
            if (dynamic.length > 0) dynamic[step.pick % dynamic.length]!.text.value = step.text
          }
        }
        const want = expected(live)
        let got: { sections: [string, string][] } | { error: true }
        try {
          const assembly = await services.global.assemble({ scope: agent })
          // The service's own (empty) persona sections are not the model's.
          const sections = assembly.sections.filter((section) => !section.name.startsWith('deployment:'))
          got = { sections: sections.map((section) => [section.name, section.text]) }
        } catch (error) {
          if (!/multiple complete prompt sections/.test((error as Error).message)) throw error
          got = { error: true }
        }
        expect(got, `after batch ${index}`).toEqual(want)
      }
    }),
    { numRuns },
  )
}, 120_000)
