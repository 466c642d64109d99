import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { buildRenderedPrompt, type PartInput, type RenderedPrompt } from '../../src/render/rendered-prompt.js'
import { comparePrompts, explain } from '../../src/render/explain.js'

const runs = Number(process.env.PROPERTY_RUNS ?? 300)

type Stability = 'static' | 'session' | 'volatile'

// Texts mix ASCII, newlines, astral characters and lone surrogates, so
// offsets, separators and byte counts are all exercised.
const char = fc.oneof(
  fc.constantFrom('a', 'b', '\n', ' ', 'é', '€', '😀', '\uD83D', '\uDE00'),
  fc.string({ maxLength: 1 }).filter((s) => s.length === 1),
)
const text = fc.array(char, { minLength: 1, maxLength: 12 }).map((chars) => chars.join(''))

/** A part whose text is literal pieces around substituted values, with the substitutions recorded. */
const partInput = fc
  .record({
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    pieces: fc.array(fc.record({ literal: fc.array(char, { maxLength: 4 }).map((c) => c.join('')), value: fc.option(fc.tuple(fc.constantFrom('x', 'y', 'z'), text), { nil: undefined }) }), {
      minLength: 1,
      maxLength: 4,
    }),
    stability: fc.constantFrom<Stability>('static', 'session', 'volatile'),
    cacheBreakpoint: fc.boolean(),
  })
  .map(({ name, pieces, stability, cacheBreakpoint }) => {
    let body = ''
    const substitutions: { variable: string; start: number; end: number }[] = []
    const variables: string[] = []
    for (const { literal, value } of pieces) {
      body += literal
      if (value === undefined) continue
      const [variable, valueText] = value
      substitutions.push({ variable, start: body.length, end: body.length + valueText.length })
      if (!variables.includes(variable)) variables.push(variable)
      body += valueText
    }
    return { name, body, substitutions, variables, stability, cacheBreakpoint }
  })
  .filter((part) => part.body !== '')
  .map(
    (part): PartInput => ({
      name: part.name,
      text: part.body,
      layer: 'global',
      origin: 'registry',
      stability: part.stability,
      variables: part.variables,
      cacheBreakpoint: part.cacheBreakpoint,
      required: false,
      complete: false,
      priority: 0,
      substitutions: part.substitutions,
    }),
  )

const prompt = fc.array(partInput, { maxLength: 8 }).map(buildRenderedPrompt)

// ── the plain model ─────────────────────────────────────────────────────────

const RANK: Record<Stability, number> = { static: 0, session: 1, volatile: 2 }

/** Blocks by the SPEC's words: split after breakpoints and at stability changes; breakpoints only in the stable run. */
function modelBlocks(parts: readonly PartInput[]) {
  const groups: PartInput[][] = []
  for (let i = 0; i < parts.length; i++) {
    const startsNew = i === 0 || parts[i - 1]!.cacheBreakpoint || parts[i - 1]!.stability !== parts[i]!.stability
    if (startsNew) groups.push([])
    groups[groups.length - 1]!.push(parts[i]!)
  }
  const stabilityOf = (group: PartInput[]): Stability =>
    group.reduce<Stability>((least, part) => (RANK[part.stability] > RANK[least] ? part.stability : least), 'static')
  // The stable run: the groups before the first volatile one; only they are breakpoints.
  const firstVolatile = groups.findIndex((group) => stabilityOf(group) === 'volatile')
  const stableRun = firstVolatile === -1 ? groups.length : firstVolatile
  return groups.map((group, i) => ({
    text: group.map((part) => part.text).join('\n\n'),
    parts: group.map((part) => part.name),
    stability: stabilityOf(group),
    cacheBreakpoint: i < stableRun && (group[group.length - 1]!.cacheBreakpoint || i === stableRun - 1),
  }))
}

/** The naive longest common prefix, in code units, and in UTF-8 bytes of whole common code points. */
function naivePrefix(a: string, b: string): { length: number; bytes: number } {
  let length = 0
  while (length < a.length && length < b.length && a[length] === b[length]) length++
  const pointsA = Array.from(a)
  const pointsB = Array.from(b)
  let common = ''
  for (let i = 0; i < pointsA.length && i < pointsB.length && pointsA[i] === pointsB[i]; i++) common += pointsA[i]
  return { length, bytes: new TextEncoder().encode(common).length }
}

/** The part containing code unit `at`, by scanning offsets from the start. */
function naivePartAt(rendered: RenderedPrompt, at: number): string | undefined {
  let offset = 0
  for (const part of rendered.parts) {
    if (at >= offset && at < offset + part.text.length) return part.name
    offset += part.text.length + 2
  }
  return undefined
}

describe('RenderedPrompt laws (SPEC §4.1)', () => {
  it('parts and blocks each join to text with a blank line, and every part is in exactly one block, in order', () => {
    fc.assert(
      fc.property(prompt, (rendered) => {
        expect(rendered.parts.map((part) => part.text).join('\n\n')).toBe(rendered.text)
        expect(rendered.blocks.map((block) => block.text).join('\n\n')).toBe(rendered.text)
        expect(rendered.blocks.flatMap((block) => block.parts)).toEqual(rendered.parts.map((part) => part.name))
      }),
      { numRuns: runs },
    )
  })

  it('offsets slice each part out of text', () => {
    fc.assert(
      fc.property(prompt, (rendered) => {
        for (const part of rendered.parts) expect(rendered.text.slice(part.start, part.end)).toBe(part.text)
      }),
      { numRuns: runs },
    )
  })

  it('blocks follow the breakpoint and stability rule of a plain model', () => {
    fc.assert(
      fc.property(fc.array(partInput, { maxLength: 8 }), (inputs) => {
        const blocks = buildRenderedPrompt(inputs).blocks.map((block) => ({ ...block, parts: [...block.parts] }))
        expect(blocks).toEqual(modelBlocks(inputs))
      }),
      { numRuns: runs },
    )
  })

  it('explain agrees with the containing part and its substitutions at every offset', () => {
    fc.assert(
      fc.property(prompt, (rendered) => {
        for (let offset = -1; offset <= rendered.text.length; offset++) {
          const explained = explain(rendered, offset)
          const name = naivePartAt(rendered, offset)
          if (name === undefined) {
            expect(explained).toBeUndefined()
            continue
          }
          expect(explained?.part.name).toBe(name)
          const { part, offsetInPart } = explained!
          expect(part.text[offsetInPart]).toBe(rendered.text[offset])
          const inside = part.substitutions.find((s) => offsetInPart >= s.start && offsetInPart < s.end)
          expect(explained!.variable).toBe(inside?.variable)
        }
      }),
      { numRuns: runs },
    )
  })

  it('comparePrompts equals a naive longest common prefix in UTF-16 code units and UTF-8 bytes', () => {
    const pair = fc.oneof(
      fc.tuple(prompt, prompt),
      // Prompts sharing leading parts, which the comparison skips whole.
      fc.tuple(fc.array(partInput, { maxLength: 4 }), fc.array(partInput, { maxLength: 3 }), fc.array(partInput, { maxLength: 3 })).map(
        ([shared, a, b]) => [buildRenderedPrompt([...shared, ...a]), buildRenderedPrompt([...shared, ...b])] as const,
      ),
      // Prompts that diverge inside a surrogate pair, where bytes must stop at the last whole code point.
      fc.tuple(partInput, fc.constantFrom('😀', '\uD83Dx', '\uD83D', '😁')).chain(([part, tailA]) =>
        fc.constantFrom('😀', '\uD83Dx', '\uD83D', '😁').map(
          (tailB) =>
            [
              buildRenderedPrompt([{ ...part, text: part.text + tailA }]),
              buildRenderedPrompt([{ ...part, text: part.text + tailB }]),
            ] as const,
        ),
      ),
    )
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const compared = comparePrompts(a, b)
        const naive = naivePrefix(a.text, b.text)
        expect({ length: compared.length, bytes: compared.bytes }).toEqual(naive)
        const atA = naivePartAt(a, naive.length)
        const atB = naivePartAt(b, naive.length)
        const expected = atA !== undefined && atB !== undefined ? { a: atA, b: atB } : undefined
        expect(compared.firstDifferentPart).toEqual(expected)
      }),
      { numRuns: runs },
    )
  })
})
