import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileTemplate, fillTemplate } from '../../src/assembly/template.js'

/** Compile, then fill: how the renderer uses a template once. */
function interpolate(text: string, variables: Readonly<Record<string, string | undefined>>, owner: string): string {
  return fillTemplate(compileTemplate(text, owner), variables, owner)
}

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)
const OWNER = 'prompt section "intro"'

type Variables = Record<string, string | undefined>
type Outcome = { readonly text: string } | { readonly error: 'malformed' | 'unknown' | 'no value' }

// ---------------------------------------------------------------------------
// Reference interpreter: deliberately unlike template.ts. A lazy regex finds
// each `{{…}}` group (the lazy body stops at the first `}}`; if a `{{` has no
// `}}` after it, no later `{{` has one either, so the regex simply stops
// matching), names are checked character by character, and substitution goes
// through String.prototype.replace with a callback, whose results the regex
// engine never revisits. Quadratic in the worst case, which is fine for the
// short texts generated here.
// ---------------------------------------------------------------------------

const GROUP = /\{\{([\s\S]*?)\}\}/g

function isLower(code: number): boolean {
  return code >= 0x61 && code <= 0x7a
}

function isNameByHand(content: string): boolean {
  if (content.length === 0 || !isLower(content.charCodeAt(0))) return false
  for (let i = 1; i < content.length; i++) {
    const code = content.charCodeAt(i)
    if (!isLower(code) && !(code >= 0x30 && code <= 0x39) && code !== 0x5f) return false
  }
  return true
}

function referenceInterpolate(text: string, variables: Variables): Outcome {
  for (const match of text.matchAll(GROUP)) {
    if (!isNameByHand(match[1]!)) return { error: 'malformed' }
  }
  let failure: Outcome | undefined
  const rendered = text.replace(GROUP, (_group, name: string) => {
    if (failure !== undefined) return ''
    if (!Object.prototype.hasOwnProperty.call(variables, name)) failure = { error: 'unknown' }
    else if (variables[name] === undefined) failure = { error: 'no value' }
    return variables[name] ?? ''
  })
  return failure ?? { text: rendered }
}

function actualInterpolate(text: string, variables: Variables): Outcome {
  try {
    return { text: interpolate(text, variables, OWNER) }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // Every template error names its owner; a message without it is a failure of its own.
    if (!message.includes(OWNER)) throw new Error(`error does not name the owner: ${message}`)
    if (message.startsWith('malformed prompt variable reference')) return { error: 'malformed' }
    if (message.startsWith('unknown prompt variable')) return { error: 'unknown' }
    if (message.includes('has no value')) return { error: 'no value' }
    throw error
  }
}

// ---------------------------------------------------------------------------
// Arbitraries: a grammar that mixes braces, valid and invalid names, spaces,
// graphemes, arbitrary code points and lone surrogates.
// ---------------------------------------------------------------------------

const knownName = fc.constantFrom('date', 'model', 'cwd', 'x', 'a1_b', 'constructor')
const validName = fc.oneof(
  { arbitrary: knownName, weight: 4 },
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,3}$/), weight: 1 },
)
const invalidName = fc.constantFrom('', ' ', ' x ', 'X', 'Date', '1a', '_a', 'a-b', 'é', '{x', 'x}', 'a {{b', '\uD800', 'a\n')
const braces = fc.constantFrom('{', '}', '{{', '}}', '{{{', '}}}', '{ {', '} }')
const noise = fc.oneof(
  fc.constantFrom(' ', '\n', '\uD800', '\uDC00', '\uDBFF\uDFFF', 'é'),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
)

const piece = fc.oneof(
  { arbitrary: validName.map((name) => `{{${name}}}`), weight: 5 },
  { arbitrary: invalidName.map((name) => `{{${name}}}`), weight: 1 },
  { arbitrary: braces, weight: 1 },
  { arbitrary: validName, weight: 1 },
  { arbitrary: invalidName, weight: 1 },
  { arbitrary: noise, weight: 4 },
)
const templateText = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''))

/** Values that look like templates, so a rescan would be visible. */
const value = fc.oneof(
  fc.constantFrom('', '{{x}}', '{{date}}', '{{ x }}', '{{', '}}', '{{constructor}}'),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  templateText,
)

const variables: fc.Arbitrary<Variables> = fc
  .array(fc.tuple(knownName, fc.option(value, { nil: undefined, freq: 4 })), { maxLength: 8 })
  .map((pairs) => Object.fromEntries(pairs))

/** Every known name registered with a defined value, so references resolve. */
const fullVariables: fc.Arbitrary<Variables> = fc.record({
  date: value,
  model: value,
  cwd: value,
  x: value,
  a1_b: value,
  constructor: value,
})

/** Literal text with no braces at all, so it cannot merge with a neighbouring reference. */
const braceFree = fc.oneof(noise, fc.string({ unit: 'grapheme', maxLength: 6 })).map((s) => s.replace(/[{}]/g, ''))

describe('template properties', () => {
  it('agrees with the reference interpreter on output or error kind', () => {
    fc.assert(
      fc.property(templateText, variables, (text, vars) => {
        expect(actualInterpolate(text, vars)).toEqual(referenceInterpolate(text, vars))
      }),
      { numRuns },
    )
  })

  it('agrees with the reference interpreter when every known variable has a value', () => {
    fc.assert(
      fc.property(templateText, fullVariables, (text, vars) => {
        expect(actualInterpolate(text, vars)).toEqual(referenceInterpolate(text, vars))
      }),
      { numRuns },
    )
  })

  it('never scans a substituted value again (template-looking values come out literally)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(braceFree, knownName), { maxLength: 6 }),
        braceFree,
        fullVariables,
        (segments, tail, vars) => {
          const text = segments.map(([literal, name]) => `${literal}{{${name}}}`).join('') + tail
          const expected = segments.map(([literal, name]) => literal + vars[name]!).join('') + tail
          expect(interpolate(text, vars, OWNER)).toBe(expected)
        },
      ),
      { numRuns },
    )
  })

  it('renders a text without "{{" unchanged, whatever the variables', () => {
    // Breaking every `{{` apart keeps lone braces, `}}` and surrogates in play.
    const withoutOpen = templateText.map((text) => text.replace(/\{(?=\{)/g, '{ '))
    fc.assert(
      fc.property(withoutOpen, variables, (text, vars) => {
        expect(text).not.toContain('{{')
        expect(interpolate(text, vars, OWNER)).toBe(text)
      }),
      { numRuns },
    )
  })

  it('compiles to parts around refs that reassemble the original text', () => {
    fc.assert(
      fc.property(templateText, (text) => {
        let template
        try {
          template = compileTemplate(text, OWNER)
        } catch {
          // A malformed group is the agreement property's concern; nothing to reassemble.
          return
        }
        expect(template.parts.length).toBe(template.refs.length + 1)
        const rebuilt = template.refs.reduce((out, ref, i) => `${out}{{${ref}}}${template.parts[i + 1]}`, template.parts[0]!)
        expect(rebuilt).toBe(text)
      }),
      { numRuns },
    )
  })
})
