import { signal, type Signal } from '@preact/signals-core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createStepSurface, type ToolSchema } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// For random registries and random edit sequences (variable values, section
// templates, sections added and removed, tools, config), the step surface's
// cacheBreak names the part at the first differing position of the sent
// prompt, or the tools/config cause when the request header changed. The
// oracle keeps its own model of the registry, renders it itself and finds
// that position and part by plain character comparison.
//
// Texts hold no line breaks, so a part boundary is never mistaken for text:
// the prompts can only differ inside a part or where one of them ends a part.

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

const SECTION_NAMES = ['s0', 's1', 's2', 's3', 's4'] as const
const VARIABLES = ['v0', 'v1', 'v2'] as const
const TOOL_NAMES = ['bash', 'grep', 'read'] as const

/** A template token: literal text, or a reference to a variable. */
type Token = { readonly literal: string } | { readonly variable: (typeof VARIABLES)[number] }
type Template = readonly Token[]

// Few short pieces, so texts often share prefixes; 😀/😁 share a high surrogate.
const LITERAL = fc.constantFrom('a', 'b', 'ab', ' ', '.', 'é', '😀', '😁')
const TOKEN: fc.Arbitrary<Token> = fc.oneof(
  LITERAL.map((literal) => ({ literal })),
  fc.constantFrom(...VARIABLES).map((variable) => ({ variable })),
)
const TEMPLATE = fc.array(TOKEN, { maxLength: 4 })
const VALUE = fc.constantFrom('', 'a', 'b', 'ab', '😀', '😁 x')

type Edit =
  | { readonly kind: 'value'; readonly variable: (typeof VARIABLES)[number]; readonly value: string }
  | { readonly kind: 'template'; readonly section: string; readonly template: Template }
  | { readonly kind: 'add'; readonly section: string; readonly order: number; readonly template: Template }
  | { readonly kind: 'remove'; readonly section: string }
  | { readonly kind: 'tool'; readonly tool: string; readonly description: 'short' | 'long' | undefined }
  | { readonly kind: 'config'; readonly temperature: number }

const SECTION = fc.constantFrom(...SECTION_NAMES)
const EDIT: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('value' as const), variable: fc.constantFrom(...VARIABLES), value: VALUE }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('template' as const), section: SECTION, template: TEMPLATE }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), section: SECTION, order: fc.integer({ min: 0, max: 5 }), template: TEMPLATE }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), section: SECTION }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('tool' as const), tool: fc.constantFrom(...TOOL_NAMES), description: fc.constantFrom('short' as const, 'long' as const, undefined) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('config' as const), temperature: fc.integer({ min: 0, max: 1 }) }) },
)

interface Scenario {
  readonly sections: readonly { readonly name: string; readonly order: number; readonly template: Template }[]
  readonly values: readonly string[]
  readonly steps: readonly (readonly Edit[])[]
}

const SCENARIO: fc.Arbitrary<Scenario> = fc.record({
  sections: fc.uniqueArray(fc.record({ name: SECTION, order: fc.integer({ min: 0, max: 5 }), template: TEMPLATE }), { selector: (s) => s.name, maxLength: 5 }),
  values: fc.tuple(VALUE, VALUE, VALUE),
  steps: fc.array(fc.array(EDIT, { maxLength: 3 }), { minLength: 1, maxLength: 6 }),
})

// ── the oracle's model ──────────────────────────────────────────────────────

interface ModelPart {
  readonly name: string
  readonly text: string
  readonly start: number
  readonly end: number
  readonly template: Template
}

interface ModelState {
  readonly sections: Map<string, { order: number; template: Template }>
  readonly values: Map<string, string>
  readonly tools: Map<string, string>
  temperature: number
}

function renderTemplate(template: Template, values: ReadonlyMap<string, string>): string {
  return template.map((token) => ('literal' in token ? token.literal : values.get(token.variable)!)).join('')
}

/** The model's prompt: sections by order then name, empty outputs dropped, joined by a blank line. */
function modelPrompt(state: ModelState): { readonly text: string; readonly parts: readonly ModelPart[] } {
  const sorted = [...state.sections].sort(([a, x], [b, y]) => x.order - y.order || (a < b ? -1 : a > b ? 1 : 0))
  const parts: ModelPart[] = []
  let text = ''
  for (const [name, { template }] of sorted) {
    const output = renderTemplate(template, state.values)
    if (output === '') continue
    if (parts.length > 0) text += '\n\n'
    parts.push({ name, text: output, start: text.length, end: text.length + output.length, template })
    text += output
  }
  return { text, parts }
}

interface Expected {
  readonly cause: string
  readonly section?: string
  readonly variable?: string
  readonly tools?: { readonly added: string[]; readonly removed: string[]; readonly changed: string[] }
}

function sameTemplate(a: Template, b: Template): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** What the oracle expects `cacheBreak` to be for the step from `before` to `after`. */
function expectedBreak(
  before: { prompt: ReturnType<typeof modelPrompt>; tools: Map<string, string>; temperature: number; values: Map<string, string> },
  after: { prompt: ReturnType<typeof modelPrompt>; tools: Map<string, string>; temperature: number; values: Map<string, string> },
): Expected | undefined {
  const added = [...after.tools.keys()].filter((name) => !before.tools.has(name)).sort()
  const removed = [...before.tools.keys()].filter((name) => !after.tools.has(name)).sort()
  const changed = [...after.tools.keys()].filter((name) => before.tools.has(name) && before.tools.get(name) !== after.tools.get(name)).sort()
  if (added.length + removed.length + changed.length > 0) return { cause: 'tools', tools: { added, removed, changed } }
  if (before.temperature !== after.temperature) return { cause: 'config' }

  const a = before.prompt
  const b = after.prompt
  let p = 0
  while (p < a.text.length && p < b.text.length && a.text[p] === b.text[p]) p++
  if (p >= a.text.length) return undefined
  // In each prompt, the part holding position p or ending right at it (never a separator: texts hold no line breaks).
  const at = (parts: readonly ModelPart[]): number => parts.findIndex((part) => part.start <= p && p <= part.end)
  const i = at(a.parts)
  const j = at(b.parts)
  const gone = a.parts[i]!
  const came = j < 0 ? undefined : b.parts[j]
  const inAfter = (name: string): boolean => b.parts.some((part) => part.name === name)
  const inBefore = (name: string): boolean => a.parts.some((part) => part.name === name)
  if (came !== undefined && came.name === gone.name) {
    if (came.text === gone.text) {
      // Both end here and only the previous prompt goes on: its next part left the prompt.
      const next = a.parts[i + 1]!
      return { cause: inAfter(next.name) ? 'section' : 'removed', section: next.name }
    }
    if (!sameTemplate(gone.template, came.template)) return { cause: 'section', section: came.name }
    const variable = came.template.flatMap((token) => ('variable' in token ? [token.variable] : [])).find((name) => before.values.get(name) !== after.values.get(name))
    return variable === undefined ? { cause: 'section', section: came.name } : { cause: 'section', section: came.name, variable }
  }
  if (!inAfter(gone.name)) return { cause: 'removed', section: gone.name }
  if (came !== undefined && !inBefore(came.name)) return { cause: 'added', section: came.name }
  return { cause: 'section', section: (came ?? gone).name }
}

// ── the run ─────────────────────────────────────────────────────────────────

const DESCRIPTIONS = { short: 'A tool.', long: 'A tool that does a little more.' } as const

describe('cacheBreak', () => {
  it('names the part at the first differing position, or the header cause', async () => {
    await fc.assert(
      fc.asyncProperty(SCENARIO, async (scenario) => {
        const root = await mount(BARE)
        const api = root.systemPrompt
        const state: ModelState = { sections: new Map(), values: new Map(), tools: new Map([['read', DESCRIPTIONS.short]]), temperature: 0 }
        const values = new Map<string, Signal<string>>()
        VARIABLES.forEach((name, i) => {
          const value = signal(scenario.values[i]!)
          values.set(name, value)
          state.values.set(name, value.value)
          api.variable(name, value)
        })
        const tools = signal<{ schemas: ToolSchema[] }>({ schemas: [] })
        const publishTools = (): void => {
          tools.value = { schemas: [...state.tools].map(([name, description]) => ({ name, description, parameters: { type: 'object' } })) }
        }
        publishTools()
        api.tools(tools)
        const registered = new Map<string, { text: Signal<string>; dispose: () => unknown }>()
        const source = (template: Template): string => template.map((token) => ('literal' in token ? token.literal : `{{${token.variable}}}`)).join('')
        const add = (name: string, order: number, template: Template): void => {
          const text = signal(source(template))
          registered.set(name, { text, dispose: api.section({ name, order, text }) })
          state.sections.set(name, { order, template })
        }
        for (const section of scenario.sections) add(section.name, section.order, section.template)

        const apply = (edit: Edit): void => {
          switch (edit.kind) {
            case 'value':
              values.get(edit.variable)!.value = edit.value
              state.values.set(edit.variable, edit.value)
              return
            case 'template': {
              const entry = registered.get(edit.section)
              if (entry === undefined) return
              entry.text.value = source(edit.template)
              state.sections.get(edit.section)!.template = edit.template
              return
            }
            case 'add':
              if (!registered.has(edit.section)) add(edit.section, edit.order, edit.template)
              return
            case 'remove': {
              const entry = registered.get(edit.section)
              if (entry === undefined) return
              entry.dispose()
              registered.delete(edit.section)
              state.sections.delete(edit.section)
              return
            }
            case 'tool':
              if (edit.description === undefined) state.tools.delete(edit.tool)
              else state.tools.set(edit.tool, DESCRIPTIONS[edit.description])
              publishTools()
              return
            case 'config':
              state.temperature = edit.temperature
              return
          }
        }
        const snapshot = () => ({ prompt: modelPrompt(state), tools: new Map(state.tools), temperature: state.temperature, values: new Map(state.values) })

        const surface = createStepSurface()
        const step = async () => surface.step({ assembly: await api.assemble(), config: { model: 'm', temperature: state.temperature } })
        let before = snapshot()
        const first = await step()
        expect(first.rendered.text).toBe(before.prompt.text)
        expect(first.cacheBreak).toBeUndefined()
        for (const edits of scenario.steps) {
          for (const edit of edits) apply(edit)
          const after = snapshot()
          const result = await step()
          expect(result.rendered.text).toBe(after.prompt.text)
          const got = result.cacheBreak
          const { layer: _layer, ...named } = got ?? { cause: 'none' }
          expect(got === undefined ? undefined : named).toEqual(expectedBreak(before, after))
          if (got !== undefined && got.section !== undefined) expect(got.layer).toBe('global')
          before = after
        }
      }),
      { numRuns },
    )
  })
})
