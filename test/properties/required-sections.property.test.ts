import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { render, SystemPrompt, type AssembledSection } from '../../src/index.js'
import { ReferenceSystemPrompt } from '../reference/index.js'

// Required sections (SPEC §5, the placement rule in docs/design.md "Authoring safety"):
// after any listener rewrite (drop, reorder, edit, add, duplicate) and with or
// without a complete section, every required section is present once with its
// collected text, in registry order among the required ones, and at the slot
// the rule gives it; the listener's other sections keep their returned order.
// The oracle of test/reference, fed the same registry and rewrite, agrees.
//
// The model states the rule as slots (how many of the listener's other
// sections precede each required one), not as the walk src uses:
//   anchored r_i: the number of other sections before its anchor;
//   missing  r_i: the first k ≥ slot(r_{i-1}) where the k-th other section is
//                 a registry section that followed r_i in the registry, capped
//                 by the slot of the next anchored required section.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)

interface Spec {
  readonly name: string
  readonly order: number
  readonly required: boolean
}

type Op =
  | { readonly t: 'drop'; readonly at: number }
  | { readonly t: 'move'; readonly from: number; readonly to: number }
  | { readonly t: 'edit'; readonly at: number }
  | { readonly t: 'add'; readonly at: number }
  | { readonly t: 'dup'; readonly at: number }

const specs = fc
  .uniqueArray(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), order: fc.integer({ min: 0, max: 4 }), required: fc.boolean() }), {
    selector: (s) => s.name,
    minLength: 1,
    maxLength: 8,
  })

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('drop' as const), at: fc.nat(20) }),
  fc.record({ t: fc.constant('move' as const), from: fc.nat(20), to: fc.nat(20) }),
  fc.record({ t: fc.constant('edit' as const), at: fc.nat(20) }),
  fc.record({ t: fc.constant('add' as const), at: fc.nat(20) }),
  fc.record({ t: fc.constant('dup' as const), at: fc.nat(20) }),
)

function rewrite(input: readonly AssembledSection[], ops: readonly Op[]): AssembledSection[] {
  const out = input.map((s) => ({ ...s }))
  let added = 0
  for (const o of ops) {
    const n = out.length
    if (o.t === 'add') out.splice(o.at % (n + 1), 0, { name: `x${added++}`, text: `X${added}` })
    if (n === 0) continue
    if (o.t === 'drop') out.splice(o.at % n, 1)
    if (o.t === 'move') out.splice(o.to % n, 0, ...out.splice(o.from % n, 1))
    if (o.t === 'edit') out[o.at % n] = { ...out[o.at % n]!, text: `${out[o.at % n]!.text} (edited)` }
    if (o.t === 'dup') out.splice(o.at % n, 0, { ...out[o.at % n]!, text: 'copy' })
  }
  return out
}

const textOf = (name: string) => `T ${name}`

/** The expected sections, from the registry and the listener's result, by the slot rule. */
function expected(registry: readonly Spec[], complete: string | undefined, listened: readonly AssembledSection[]): { names: string[]; texts: string[]; restored: string[] } {
  const required = registry.filter((s) => s.required).map((s) => s.name)
  const rankOf = (name: string) => required.indexOf(name)
  // Gap of a non-required registry section: required sections before it in the registry.
  const gapOf = (name: string): number | undefined => {
    const at = registry.findIndex((s) => s.name === name)
    if (at < 0 || registry[at]!.required) return undefined
    return registry.slice(0, at).filter((s) => s.required).length
  }
  // Anchors, from the listener's own result.
  const anchorAt = new Map<number, number>() // rank → index in listened
  let last = -1
  listened.forEach((item, index) => {
    const r = rankOf(item.name)
    if (r > last && !anchorAt.has(r)) {
      anchorAt.set(r, index)
      last = r
    }
  })
  const verbatim = (r: number) => listened[anchorAt.get(r)!]!.text === textOf(required[r]!)
  const restored = required.filter((_, r) => !anchorAt.has(r) || !verbatim(r))
  const base = complete === undefined ? listened : [{ name: complete, text: textOf(complete) }]
  const baseAnchor = complete === undefined ? anchorAt : new Map<number, number>()
  const others = base.filter((item) => rankOf(item.name) < 0)
  const otherIndexBefore = (index: number) => base.slice(0, index).filter((item) => rankOf(item.name) < 0).length
  const slots: number[] = []
  for (let r = 0; r < required.length; r++) {
    if (baseAnchor.has(r)) {
      slots.push(otherIndexBefore(baseAnchor.get(r)!))
      continue
    }
    const from = r === 0 ? 0 : slots[r - 1]!
    let slot = others.length
    for (let k = from; k < others.length; k++) {
      const g = gapOf(others[k]!.name)
      if (g !== undefined && g > r) {
        slot = k
        break
      }
    }
    for (let j = r + 1; j < required.length; j++) {
      if (baseAnchor.has(j)) {
        slot = Math.min(slot, otherIndexBefore(baseAnchor.get(j)!))
        break
      }
    }
    slots.push(slot)
  }
  const out: { name: string; text: string }[] = []
  let r = 0
  for (let k = 0; k <= others.length; k++) {
    while (r < required.length && slots[r] === k) out.push({ name: required[r]!, text: textOf(required[r++]!) })
    if (k < others.length) out.push(others[k]!)
  }
  return { names: out.map((s) => s.name), texts: out.map((s) => s.text), restored }
}

describe('required sections (property)', () => {
  it('are present with their collected text, in registry order, at the rule’s slot, after any rewrite', async () => {
    await fc.assert(
      fc.asyncProperty(specs, fc.array(op, { maxLength: 8 }), fc.option(fc.nat(7), { nil: undefined }), async (list, ops, completeAt) => {
        const app = new Context()
        await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
        await app.plugin(ReferenceSystemPrompt, { includeHarnessIdentity: false })
        const sp = app.systemPrompt
        const oracle = (app as unknown as { referencePrompt: ReferenceSystemPrompt }).referencePrompt
        const optional = list.filter((s) => !s.required)
        const complete = completeAt === undefined || optional.length === 0 ? undefined : optional[completeAt % optional.length]!.name
        for (const s of list) {
          const input = { name: s.name, order: s.order, text: textOf(s.name), required: s.required, complete: s.name === complete }
          sp.section(input)
          oracle.section(input)
        }
        let listened: AssembledSection[] = []
        app.on('system-prompt/assemble', async (_p, _c, next) => {
          const p = await next()
          // The persona sections are dropped so the registry is exactly `list`.
          listened = rewrite(p.sections.filter((s) => !s.name.startsWith('deployment:')), ops)
          return { ...p, sections: listened }
        })
        const registry = [...list].sort((x, y) => x.order - y.order || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
        const assembly = await sp.assemble()
        const want = expected(registry, complete, listened)
        expect(assembly.sections.map((s) => s.name)).toEqual(want.names)
        expect(assembly.sections.map((s) => s.text)).toEqual(want.texts)
        const parts = render(assembly).parts
        expect(parts.filter((p) => p.restored).map((p) => p.name)).toEqual(want.restored)
        for (const p of parts) expect(p.required).toBe(list.some((s) => s.name === p.name && s.required))
        // The oracle (test/reference) restores them the same way, from the same rewrite.
        const reference = await oracle.assemble()
        expect(reference.sections).toEqual(assembly.sections)
      }),
      { numRuns },
    )
  })
})
