import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createScope,
  renderContextSnapshot,
  renderPrompt,
  RUNTIME_CONTEXT_HEADER,
  SystemPrompt,
} from '../../src/index.js'

// renderPrompt and renderContextSnapshot on real assemblies (memoized per
// scope across frames) against a deliberately plain interpreter of the
// template rules (SPEC §2 Rendering), over arbitrary strings: braces in every
// arrangement, unicode, lone surrogates and fully arbitrary UTF-16.
//
// template.property.test.ts checks the pure template engine; this one goes
// through registration, shadowing, assembly, the render memo and the error
// labels of scoped entries.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

type Variables = Readonly<Record<string, string | undefined>>
type ErrorKind = 'malformed' | 'unknown' | 'no value'
type Outcome = { readonly text: string } | { readonly error: ErrorKind; readonly owner: string }

// ── the reference interpreter: a character-by-character scanner ─────────────

function isName(content: string): boolean {
  if (content.length === 0) return false
  for (let i = 0; i < content.length; i++) {
    const c = content[i]!
    const lower = c >= 'a' && c <= 'z'
    if (i === 0 ? !lower : !(lower || (c >= '0' && c <= '9') || c === '_')) return false
  }
  return true
}

/** Literal runs and references; a `{{` without a later `}}` makes the rest literal. */
function tokenize(text: string): (string | { ref: string })[] {
  const tokens: (string | { ref: string })[] = []
  let literal = ''
  let i = 0
  while (i < text.length) {
    if (text[i] === '{' && text[i + 1] === '{') {
      let close = -1
      for (let j = i + 2; j + 1 < text.length; j++) {
        if (text[j] === '}' && text[j + 1] === '}') {
          close = j
          break
        }
      }
      if (close < 0) {
        literal += text.slice(i)
        break
      }
      tokens.push(literal, { ref: text.slice(i + 2, close) })
      literal = ''
      i = close + 2
    } else {
      literal += text[i]
      i++
    }
  }
  tokens.push(literal)
  return tokens
}

/** One item's output, or the kind of its first error (a malformed group anywhere wins). */
function interpret(text: string, interpolate: boolean, variables: Variables): string | { error: ErrorKind } {
  if (!interpolate) return text
  const tokens = tokenize(text)
  if (tokens.some((token) => typeof token !== 'string' && !isName(token.ref))) return { error: 'malformed' }
  let out = ''
  for (const token of tokens) {
    if (typeof token === 'string') out += token
    else if (!Object.prototype.hasOwnProperty.call(variables, token.ref)) return { error: 'unknown' }
    else if (variables[token.ref] === undefined) return { error: 'no value' }
    else out += variables[token.ref]
  }
  return out
}

interface Item {
  readonly name: string
  readonly text: string
  readonly interpolate?: boolean
}

/** Renders items in order; the first failing item's error, labelled; empty outputs dropped. */
function interpretAll(items: readonly Item[], variables: Variables, label: (name: string) => string): Outcome | string[] {
  const outputs: string[] = []
  for (const item of items) {
    const output = interpret(item.text, item.interpolate !== false, variables)
    if (typeof output !== 'string') return { error: output.error, owner: label(item.name) }
    if (output !== '') outputs.push(output)
  }
  return outputs
}

function referencePrompt(items: readonly Item[], variables: Variables, label: (name: string) => string): Outcome {
  const outputs = interpretAll(items, variables, label)
  return Array.isArray(outputs) ? { text: outputs.join('\n\n') } : outputs
}

function referenceSnapshot(items: readonly Item[], variables: Variables, label: (name: string) => string): Outcome {
  const outputs = interpretAll(items, variables, label)
  if (!Array.isArray(outputs)) return outputs
  return { text: outputs.length === 0 ? '' : [RUNTIME_CONTEXT_HEADER, ...outputs].join('\n\n') }
}

/** The production outcome; an error must say its kind and name its owner as ` in <owner>;`. */
function actual(render: () => string, owners: readonly string[]): Outcome {
  try {
    return { text: render() }
  } catch (error) {
    const message = (error as Error).message
    const kind = message.startsWith('malformed prompt variable reference')
      ? 'malformed'
      : message.startsWith('unknown prompt variable')
        ? 'unknown'
        : message.includes('has no value')
          ? 'no value'
          : undefined
    const owner = owners.find((candidate) => message.includes(` in ${candidate};`))
    if (kind === undefined || owner === undefined) throw error
    return { error: kind, owner }
  }
}

// ── arbitraries ─────────────────────────────────────────────────────────────

const NAMES = ['date', 'model', 'cwd', 'x', 'a1_b', 'constructor'] as const
const validName = fc.oneof(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z][a-z0-9_]{0,3}$/))
const invalidName = fc.constantFrom('', ' ', ' x ', 'X', '1a', '_a', 'a-b', 'é', '{x', 'x}', '\uD800', 'a\n', 'x}y')
const piece = fc.oneof(
  { arbitrary: validName.map((name) => `{{${name}}}`), weight: 6 },
  { arbitrary: invalidName.map((name) => `{{${name}}}`), weight: 1 },
  { arbitrary: fc.constantFrom('{', '}', '{{', '}}', '{{{', '}}}', '{ {', '} }'), weight: 2 },
  { arbitrary: fc.constantFrom('\uD800', '\uDC00', '\uDBFF\uDFFF', 'é', '漢', '👩‍👩‍👧', '\n', ' ', '\u0000'), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 4 }), weight: 2 },
)
/** Texts: a grammar of the interesting pieces, a dense soup of braces and surrogates, or anything at all. */
const text = fc.oneof(
  { arbitrary: fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join('')), weight: 6 },
  { arbitrary: fc.string({ unit: fc.constantFrom('{', '}', 'x', ' ', '\uD800', '\uDC00'), maxLength: 16 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
)
/** Variable values look like templates too, so a rescan would show; `undefined` is "no value". */
const value = fc.option(fc.oneof(text, fc.constantFrom('{{x}}', '{{date}}', '{{')), { nil: undefined, freq: 5 })

const layer = fc.constantFrom('global', 'scope', 'both', 'none')

const scenario = fc.record({
  sections: fc.array(
    fc.record({ order: fc.integer({ min: -2, max: 2 }), scoped: fc.boolean(), interpolate: fc.boolean(), text }),
    { minLength: 1, maxLength: 4 },
  ),
  contexts: fc.array(fc.record({ order: fc.integer({ min: 0, max: 2 }), scoped: fc.boolean(), text }), { maxLength: 3 }),
  variables: fc.record(Object.fromEntries(NAMES.map((name) => [name, fc.tuple(layer, value, value)])) as Record<
    (typeof NAMES)[number],
    fc.Arbitrary<[string, string | undefined, string | undefined]>
  >),
  /** Later frames: new texts and values written into the registered signals. */
  frames: fc.array(
    fc.record({ texts: fc.array(fc.option(text, { freq: 2 }), { maxLength: 7 }), values: fc.array(fc.option(value, { freq: 2 }), { maxLength: 12 }) }),
    { maxLength: 3 },
  ),
})

// ── the property ───────────────────────────────────────────────────────────

describe('renderPrompt on real assemblies', () => {
  it('agrees with the plain interpreter over arbitrary strings, frame after frame, memo or not', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ sections, contexts, variables, frames }) => {
        const app = new Context()
        await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
        const key = { name: 'agent' }
        let scoped!: SystemPrompt
        await app.inject(['systemPrompt'], (ctx) => {
          scoped = createScope(ctx, key).ctx.systemPrompt
        })
        const global = app.systemPrompt
        const textSignals: Signal<string>[] = []
        const labels = new Map<string, string>()
        sections.forEach((section, i) => {
          const name = `section-${i}`
          const source = signal(section.text)
          textSignals.push(source)
          labels.set(name, `prompt section "${name}"${section.scoped ? ' in scope "agent"' : ''}`)
          ;(section.scoped ? scoped : global).section({ name, order: section.order, text: source, interpolate: section.interpolate })
        })
        contexts.forEach((context, i) => {
          const name = `context-${i}`
          const source = signal(context.text)
          textSignals.push(source)
          labels.set(name, `runtime context "${name}"${context.scoped ? ' in scope "agent"' : ''}`)
          ;(context.scoped ? scoped : global).context({ name, order: context.order, text: source })
        })
        const valueSignals: Signal<string | undefined>[] = []
        for (const [name, [where, globalValue, scopedValue]] of Object.entries(variables)) {
          if (where === 'global' || where === 'both') global.variable(name, valueSignals[valueSignals.push(signal(globalValue)) - 1]!)
          if (where === 'scope' || where === 'both') scoped.variable(name, valueSignals[valueSignals.push(signal(scopedValue)) - 1]!)
        }
        const label = (name: string): string => labels.get(name)!
        const owners = [...labels.values()].sort((a, b) => b.length - a.length)

        for (let frame = 0; frame <= frames.length; frame++) {
          if (frame > 0) {
            const { texts, values } = frames[frame - 1]!
            texts.forEach((next, i) => next !== null && i < textSignals.length && (textSignals[i]!.value = next))
            values.forEach((next, i) => next !== null && i < valueSignals.length && (valueSignals[i]!.value = next))
          }
          const assembly = await app.systemPrompt.assemble({ scope: key })
          // The persona prefix and suffix sections are always there (empty); the rest are this run's, sorted.
          expect(assembly.sections.filter((s) => s.name.startsWith('section-')).map((s) => s.text)).toEqual(
            [...sections.keys()]
              .sort((a, b) => sections[a]!.order - sections[b]!.order || (`section-${a}` < `section-${b}` ? -1 : 1))
              .map((i) => textSignals[i]!.value),
          )
          const prompt = referencePrompt(assembly.sections, assembly.variables, label)
          const snapshot = referenceSnapshot(assembly.contexts, assembly.variables, label)
          expect(actual(() => renderPrompt(assembly), owners)).toEqual(prompt)
          // A second render is served by the memo; a spread copy has no meta and renders from scratch.
          expect(actual(() => renderPrompt(assembly), owners)).toEqual(prompt)
          expect(actual(() => renderPrompt({ ...assembly }), [...owners, ...[...labels.keys()].map((n) => `prompt section "${n}"`)])).toEqual(
            'error' in prompt ? { ...prompt, owner: prompt.owner.replace(' in scope "agent"', '') } : prompt,
          )
          expect(actual(() => renderContextSnapshot(assembly), owners)).toEqual(snapshot)
        }
      }),
      { numRuns },
    )
  })
})
