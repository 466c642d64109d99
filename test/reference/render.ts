import type { AssembledContext, AssembledSection } from '../../src/assembly/types.js'
import { describe } from './entries.js'

/** The header that opens every non-empty runtime-context snapshot. */
export const REFERENCE_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/
/** Longest group quoted whole in an error; longer ones are shortened (head … tail). */
const QUOTE_LIMIT = 64

type Variables = Readonly<Record<string, string | undefined>>

/** Labels naming each section/context of one result after its registration, by name. */
export interface RenderLabels {
  readonly sections?: ReadonlyMap<string, string>
  readonly contexts?: ReadonlyMap<string, string>
}

// Held beside the exact result the oracle returned, as SPEC's provenance is:
// a copy renders with plain `kind "name"` labels.
const labelsByResult = new WeakMap<object, RenderLabels>()

/** Remembers how render errors name the items of `result` (only this exact object). */
export function rememberLabels<T extends object>(result: T, labels: RenderLabels): T {
  labelsByResult.set(result, labels)
  return result
}

/** The labels remembered for exactly `result`, if any. */
export function labelsOf(result: object): RenderLabels | undefined {
  return labelsByResult.get(result)
}

function malformed(group: string, owner: string): Error {
  const shown = group.length > QUOTE_LIMIT ? `${group.slice(0, QUOTE_LIMIT - 16)}…${group.slice(-12)}` : group
  return new Error(
    `malformed prompt variable reference ${JSON.stringify(shown)} in ${owner}; ` +
      'write {{name}} with a lowercase name matching /^[a-z][a-z0-9_]*$/, ' +
      'or register the entry with `interpolate: false` to keep its text literal',
  )
}

/** Throws "malformed prompt variable reference" for the first group of `text` that is not a bare name. */
export function referenceCheckTemplate(text: string, owner: string): void {
  for (let at = 0, open = text.indexOf('{{'); open >= 0; open = text.indexOf('{{', at)) {
    const close = text.indexOf('}}', open + 2)
    if (close < 0) return
    if (!VARIABLE_NAME.test(text.slice(open + 2, close))) throw malformed(text.slice(open, close + 2), owner)
    at = close + 2
  }
}

/**
 * Interpolates `{{name}}` groups in `text`, scanning it once from left to
 * right (linear in its length). A group runs from `{{` to the first `}}`
 * after it; a `{{` with no `}}` anywhere after it leaves the rest literal.
 * Substituted values are appended, never scanned again.
 *
 * Throws "malformed prompt variable reference" (the group is not a bare
 * name; checked over the whole text first), "unknown prompt variable" (no
 * own property of `variables`), "has no value" (registered but `undefined`)
 * or a `TypeError` for another non-string value, each naming `owner`
 * (e.g. `prompt section "intro"`).
 */
export function referenceInterpolate(text: string, variables: Variables, owner: string): string {
  referenceCheckTemplate(text, owner)
  let out = ''
  let at = 0
  for (;;) {
    const open = text.indexOf('{{', at)
    if (open < 0) break
    const close = text.indexOf('}}', open + 2)
    if (close < 0) break
    const name = text.slice(open + 2, close)
    if (!Object.hasOwn(variables, name)) {
      const known = Object.getOwnPropertyNames(variables).sort()
      throw new Error(
        `unknown prompt variable "{{${name}}}" in ${owner}; registered variables: ${known.length > 0 ? known.join(', ') : 'none'}`,
      )
    }
    const value: unknown = variables[name]
    if (value === undefined) {
      throw new Error(`prompt variable "${name}" has no value in ${owner}; its provider returned undefined for this assembly`)
    }
    if (typeof value !== 'string') {
      throw new TypeError(`prompt variable "${name}" is ${describe(value)} in ${owner}; a variable value must be a string, or undefined for no value`)
    }
    out += text.slice(at, open) + value
    at = close + 2
  }
  return out + text.slice(at)
}

type Item = { readonly name: string; readonly text: string; readonly interpolate?: boolean }

/** Throws unless every item has a string `name` and `text` (SPEC §2 "Reliability"), naming the first bad one. */
function checkItems(items: readonly Item[], field: 'sections' | 'contexts'): void {
  items.forEach((item: Item | null, i) => {
    if (typeof item === 'object' && item !== null && typeof item.name === 'string' && typeof item.text === 'string') return
    const shown = typeof item === 'object' && item !== null && !Array.isArray(item) ? `{ name: ${describe(item.name)}, text: ${describe(item.text)} }` : describe(item)
    throw new TypeError(`the assembly to render has ${field}[${i}] = ${shown}; every ${field.slice(0, -1)} needs a string name and text`)
  })
}

function renderItems(items: readonly Item[], variables: Variables, kind: string, labels: ReadonlyMap<string, string> | undefined): string[] {
  checkItems(items, kind === 'prompt section' ? 'sections' : 'contexts')
  return items.map((item) => {
    const owner = labels?.get(item.name) ?? `${kind} "${item.name}"`
    return item.interpolate === false ? item.text : referenceInterpolate(item.text, variables, owner)
  })
}

/**
 * The system prompt of an assembly: every section rendered in array order,
 * empty results dropped, joined with a blank line. Every section is scanned
 * on every call (the oracle has no cache).
 */
export function referenceRenderPrompt(assembly: {
  readonly sections: readonly AssembledSection[]
  readonly variables: Variables
}): string {
  const labels = labelsOf(assembly)?.sections
  return renderItems(assembly.sections, assembly.variables, 'prompt section', labels)
    .filter((text) => text !== '')
    .join('\n\n')
}

/** The non-empty rendered runtime contexts of an assembly, in array order. */
export function referenceRenderContextSections(assembly: {
  readonly contexts: readonly AssembledContext[]
  readonly variables: Variables
}): { name: string; text: string }[] {
  const labels = labelsOf(assembly)?.contexts
  const texts = renderItems(assembly.contexts, assembly.variables, 'runtime context', labels)
  const out: { name: string; text: string }[] = []
  texts.forEach((text, i) => {
    if (text !== '') out.push({ name: assembly.contexts[i]!.name, text })
  })
  return out
}

/** `''` for no sections, else the snapshot header, a blank line, and the texts joined by blank lines. */
export function referenceJoinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  return [REFERENCE_CONTEXT_HEADER, ...sections.map((section) => section.text)].join('\n\n')
}

/** The user-role runtime-context snapshot of an assembly (`''` when nothing renders). */
export function referenceRenderContextSnapshot(assembly: {
  readonly contexts: readonly AssembledContext[]
  readonly variables: Variables
}): string {
  return referenceJoinContextSections(referenceRenderContextSections(assembly))
}
