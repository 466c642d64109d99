import type { AssembledContext, AssembledSection } from '../../src/assembly/types.js'

/** The header that opens every non-empty runtime-context snapshot. */
export const REFERENCE_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/

type Variables = Readonly<Record<string, string | undefined>>

/**
 * Interpolates `{{name}}` groups in `text`, scanning it once from left to
 * right (linear in its length). A group runs from `{{` to the first `}}`
 * after it; a `{{` with no `}}` anywhere after it leaves the rest literal.
 * Substituted values are appended, never scanned again.
 *
 * Throws "malformed prompt variable reference" (the group is not a bare
 * name), "unknown prompt variable" (no own property of `variables`) or
 * "has no value" (registered but `undefined`), each naming `subject`.
 */
export function referenceInterpolate(text: string, variables: Variables, subject: string): string {
  // Malformed groups are a fault of the text itself, so they win over an
  // earlier unknown or valueless name (the whole text is checked first).
  for (let at = 0, open = text.indexOf('{{'); open >= 0; open = text.indexOf('{{', at)) {
    const close = text.indexOf('}}', open + 2)
    if (close < 0) break
    const group = text.slice(open, close + 2)
    if (!VARIABLE_NAME.test(text.slice(open + 2, close))) {
      throw new Error(
        `malformed prompt variable reference "${group}" in ${subject}; write {{name}} with a name matching /^[a-z][a-z0-9_]*$/, or set interpolate: false`,
      )
    }
    at = close + 2
  }
  let out = ''
  let at = 0
  for (;;) {
    const open = text.indexOf('{{', at)
    if (open < 0) break
    const close = text.indexOf('}}', open + 2)
    if (close < 0) break
    const name = text.slice(open + 2, close)
    const group = text.slice(open, close + 2)
    if (!VARIABLE_NAME.test(name)) {
      throw new Error(
        `malformed prompt variable reference "${group}" in ${subject}; write {{name}} with a name matching /^[a-z][a-z0-9_]*$/, or set interpolate: false`,
      )
    }
    if (!Object.hasOwn(variables, name)) {
      const known = Object.keys(variables).sort()
      throw new Error(
        `unknown prompt variable "${group}" in ${subject}; registered variables: ${
          known.length > 0 ? known.join(', ') : '(none)'
        }`,
      )
    }
    const value = variables[name]
    if (value === undefined) {
      throw new Error(
        `prompt variable "${group}" in ${subject} has no value in this assembly; give it a value or stop referencing it`,
      )
    }
    out += text.slice(at, open) + value
    at = close + 2
  }
  return out + text.slice(at)
}

function renderText(
  entry: { readonly name: string; readonly text: string; readonly interpolate?: boolean },
  variables: Variables,
  subject: string,
): string {
  return entry.interpolate === false ? entry.text : referenceInterpolate(entry.text, variables, subject)
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
  const parts: string[] = []
  for (const section of assembly.sections) {
    const text = renderText(section, assembly.variables, `section "${section.name}"`)
    if (text !== '') parts.push(text)
  }
  return parts.join('\n\n')
}

/** The non-empty rendered runtime contexts of an assembly, in array order. */
export function referenceRenderContextSections(assembly: {
  readonly contexts: readonly AssembledContext[]
  readonly variables: Variables
}): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = []
  for (const context of assembly.contexts) {
    const text = renderText(context, assembly.variables, `context "${context.name}"`)
    if (text !== '') out.push({ name: context.name, text })
  }
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
