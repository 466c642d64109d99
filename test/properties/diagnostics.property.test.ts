import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScope, SystemPrompt, type PromptDiagnostic, type Stability } from '../../src/index.js'

// diagnostics() of a random registry (global layer and one scope that shadows
// some of it, optionally suppressing optional contexts) equals the set of
// problems a plain interpreter finds rendering every string/signal section
// and context of that view, after every step of a random sequence of signal
// writes and disposals. The interpreter is written here, character by
// character; it imports nothing of src's template code.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

const VARS = ['a', 'b', 'c', 'd'] as const
type Kind = 'static' | 'signal' | 'function'

interface VarSpec {
  readonly name: (typeof VARS)[number]
  readonly scoped: boolean
  readonly kind: Kind
  readonly value: string | undefined
  readonly stability: Stability | undefined
}

interface TextSpec {
  readonly entryKind: 'section' | 'context'
  readonly name: string
  readonly scoped: boolean
  readonly kind: Kind
  readonly text: string
  readonly interpolate: boolean
  readonly required: boolean
  readonly stability: Stability | undefined
}

const fragment = fc.oneof(
  fc.constantFrom('plain ', ' ', '{', '}', '{{', '}}', '{{ a }}', '{{}}', '{{{b}}}', '{{A}}', '{{1x}}', '{{zz}}', '{{constructor}}'),
  fc.constantFrom(...VARS).map((n) => `{{${n}}}`),
)
const text = fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join(''))
const stability = fc.constantFrom<Stability | undefined>(undefined, 'static', 'session', 'volatile')
const kind = fc.constantFrom<Kind>('static', 'signal', 'signal', 'function')

const varSpec: fc.Arbitrary<VarSpec> = fc.record({
  name: fc.constantFrom(...VARS),
  scoped: fc.boolean(),
  kind,
  value: fc.option(fc.constantFrom('x', '{{a}}', ''), { nil: undefined }),
  stability,
})
const textSpec: fc.Arbitrary<TextSpec> = fc.record({
  entryKind: fc.constantFrom<'section' | 'context'>('section', 'context'),
  name: fc.constantFrom('s1', 's2', 's3', 's4'),
  scoped: fc.boolean(),
  kind,
  text,
  interpolate: fc.constantFrom(true, true, true, false),
  required: fc.boolean(),
  stability,
})

type Step = { readonly t: 'write'; readonly at: number; readonly value: string | undefined } | { readonly t: 'dispose'; readonly at: number }
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant('write' as const), at: fc.nat(30), value: fc.option(fc.oneof(text, fc.constant('y')), { nil: undefined }) }),
  fc.record({ t: fc.constant('dispose' as const), at: fc.nat(30) }),
)

// ── the plain interpreter ────────────────────────────────────────────────────

function isName(content: string): boolean {
  if (content.length === 0) return false
  const first = content.charCodeAt(0)
  if (first < 0x61 || first > 0x7a) return false
  for (let i = 1; i < content.length; i++) {
    const c = content.charCodeAt(i)
    const ok = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f
    if (!ok) return false
  }
  return true
}

/** Every `{{…}}` group, character by character: opens at `{{`, closes at the first `}}` after it. */
function groups(source: string): string[] {
  const out: string[] = []
  let i = 0
  while (i < source.length - 1) {
    if (source[i] === '{' && source[i + 1] === '{') {
      let j = i + 2
      while (j < source.length - 1 && !(source[j] === '}' && source[j + 1] === '}')) j++
      if (j >= source.length - 1) break
      out.push(source.slice(i, j + 2))
      i = j + 2
    } else i++
  }
  return out
}

interface Live {
  readonly spec: VarSpec | TextSpec
  readonly signal: Signal<string | undefined> | undefined
  disposed: boolean
}

/** The effective entries of the scope's view: the scoped entry of a name shadows the global one. */
function effective<S extends VarSpec | TextSpec>(live: readonly Live[], pick: (s: VarSpec | TextSpec) => s is S): Map<string, { spec: S; live: Live }> {
  const out = new Map<string, { spec: S; live: Live }>()
  for (const scoped of [false, true]) {
    for (const l of live) if (!l.disposed && pick(l.spec) && l.spec.scoped === scoped) out.set(l.spec.name, { spec: l.spec, live: l })
  }
  return out
}

const isVar = (s: VarSpec | TextSpec): s is VarSpec => !('entryKind' in s)
const isText = (kindOf: 'section' | 'context') => (s: VarSpec | TextSpec): s is TextSpec => 'entryKind' in s && s.entryKind === kindOf

function interpret(live: readonly Live[], suppressed: boolean): string[] {
  const variables = effective(live, isVar)
  const found = new Set<string>()
  for (const entryKind of ['section', 'context'] as const) {
    for (const { spec, live: l } of effective(live, isText(entryKind)).values()) {
      if (spec.kind === 'function' || !spec.interpolate) continue
      if (entryKind === 'context' && suppressed && !spec.required) continue
      const source = spec.kind === 'signal' ? l.signal!.value! : spec.text
      for (const group of groups(source)) {
        const content = group.slice(2, -2)
        if (!isName(content)) {
          found.add(`${entryKind} ${spec.name} malformed ${group}`)
          continue
        }
        const variable = variables.get(content)
        if (variable === undefined) {
          found.add(`${entryKind} ${spec.name} unknown-variable ${content}`)
          continue
        }
        const value = variable.spec.kind === 'signal' ? variable.live.signal!.value : variable.spec.kind === 'static' ? 'static' : 'unknown'
        if (value === undefined) found.add(`${entryKind} ${spec.name} no-value ${content}`)
        if (entryKind === 'section' && spec.stability !== 'volatile' && variable.spec.stability === 'volatile') {
          found.add(`${entryKind} ${spec.name} volatile-in-section ${content}`)
        }
      }
    }
  }
  // A scoped section ordered before a global one whose text is not empty (a function text counts) splits the shared prefix.
  const sections = [...effective(live, isText('section')).values()].sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0))
  sections.forEach(({ spec }, i) => {
    if (!spec.scoped) return
    const before = sections.slice(i + 1).find(({ spec: later, live: l }) => !later.scoped && (later.kind === 'function' || (later.kind === 'signal' ? l.signal!.value : later.text) !== ''))
    if (before !== undefined) found.add(`section ${spec.name} shared-prefix-split ${before.spec.name}`)
  })
  return [...found].sort()
}

function keyOf(d: PromptDiagnostic): string {
  const detail = d.kind === 'malformed' ? JSON.parse(/reference ("(?:[^"\\]|\\.)*") in/.exec(d.message)![1]!) : d.kind === 'shared-prefix-split' ? d.before : d.variable
  return `${d.entryKind} ${d.entry} ${d.kind} ${detail}`
}

// ── the property ─────────────────────────────────────────────────────────────

describe('diagnostics() (property)', () => {
  it('equals what a plain interpreter finds rendering every string/signal entry, after every write and disposal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(varSpec, { selector: (v) => `${v.name}${v.scoped}`, maxLength: 6 }),
        fc.uniqueArray(textSpec, { selector: (t) => `${t.entryKind}${t.name}${t.scoped}`, maxLength: 8 }),
        fc.boolean(),
        fc.array(step, { maxLength: 10 }),
        async (vars, texts, suppress, steps) => {
          const app = new Context()
          await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
          const key = { name: 'agent' }
          let scoped!: SystemPrompt
          await app.inject(['systemPrompt'], (ctx) => void (scoped = createScope(ctx, key).ctx.systemPrompt))
          const live: Live[] = []
          const disposers: (() => unknown)[] = []
          for (const v of vars) {
            const sp = v.scoped ? scoped : app.systemPrompt
            const s = v.kind === 'signal' ? signal<string | undefined>(v.value) : undefined
            // A static value must be a string; an undefined one is registered as ''.
            const source = v.kind === 'static' ? (v.value ?? '') : v.kind === 'signal' ? s! : () => v.value
            disposers.push(sp.variable(v.name, source, { stability: v.stability }))
            live.push({ spec: v, signal: s, disposed: false })
          }
          for (const t of texts) {
            const sp = t.scoped ? scoped : app.systemPrompt
            const s = t.kind === 'signal' ? signal<string | undefined>(t.text) : undefined
            const source = t.kind === 'static' ? t.text : t.kind === 'signal' ? (s as Signal<string>) : () => t.text
            const input = { name: t.name, order: 1, text: source, interpolate: t.interpolate, required: t.required, stability: t.stability }
            disposers.push(t.entryKind === 'section' ? sp.section(input) : sp.context(input))
            live.push({ spec: t, signal: s, disposed: false })
          }
          if (suppress) scoped.suppressRuntimeContext()
          const check = () => {
            expect(app.systemPrompt.diagnostics(key).map(keyOf).sort()).toEqual(interpret(live, suppress))
          }
          check()
          for (const s of steps) {
            // Writes pick among the signal-backed entries, so signal changes are common.
            const pool = s.t === 'write' ? live.filter((x) => x.signal !== undefined) : live
            if (pool.length === 0) continue
            const l = pool[s.at % pool.length]!
            if (s.t === 'dispose' && !l.disposed) {
              disposers[live.indexOf(l)]!()
              l.disposed = true
            } else if (s.t === 'write' && l.signal !== undefined) {
              // A text signal always holds a string; a variable signal may hold undefined.
              l.signal.value = 'entryKind' in l.spec ? (s.value ?? '') : s.value
            }
            check()
          }
        },
      ),
      { numRuns },
    )
  })
})
