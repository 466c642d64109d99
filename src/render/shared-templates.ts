/**
 * Rendering one item: templates and filled outputs shared between the render
 * memos of every view (a registration's template is compiled once per text,
 * and a fill with the same values hands out the string an earlier fill made),
 * and the memo-less render of an item.
 */

import { compileTemplate, fillTemplate, type Template, type TemplateOwner } from '../assembly/template.js'

type Variables = Readonly<Record<string, string | undefined>>

/** A section or context as it reaches the renderer. */
export interface RenderItem {
  readonly name: string
  readonly text: string
  readonly interpolate?: boolean
}

/** One rendered item: its output, and the template its references came from (`undefined`: none). */
export interface RenderedItem {
  readonly name: string
  readonly output: string
  readonly template: Template | undefined
}

/** The key fields of an item; its text may come from a parallel array (see `RenderMemo.render`). */
export interface RenderKey {
  readonly name: string
  readonly interpolate?: boolean
}

/** Renders one item from scratch (the memo-less path). */
export function renderItem(item: RenderItem, variables: Variables, kind: RenderOwner): RenderedItem {
  const template = compiled(item.name, item.text, item.interpolate !== false, kind)
  const output = template === undefined ? item.text : fillTemplate(template, variables, ownerOf(kind, item.name))
  return { name: item.name, output, template }
}

/**
 * Names a rendered item in errors: a kind (`'prompt section'`, giving
 * `prompt section "intro"`) or a function that labels it by name, e.g. after
 * its registration (`prompt section "intro" in scope "agent-1"`).
 */
export type RenderOwner = string | ((name: string) => string)

/** The label of item `name` in errors. */
export function ownerOf(kind: RenderOwner, name: string): string {
  return typeof kind === 'string' ? `${kind} "${name}"` : kind(name)
}

/** The template of `text` (`undefined`: no references, or not interpolated); throws for a text that is not a string. */
export function compiled(name: string, text: string, interpolate: boolean, kind: RenderOwner): Template | undefined {
  if (typeof text !== 'string') {
    throw new TypeError(`${ownerOf(kind, String(name))} text must be a string when rendering (got ${typeof text})`)
  }
  if (!interpolate || !text.includes('{{')) return undefined
  const template = compileTemplate(text, typeof kind === 'string' ? ownerOf(kind, name) : () => ownerOf(kind, name))
  return template.refs.length === 0 ? undefined : template
}

/** A template compiled once per registration and text, for every view that renders it. */
const sharedTemplates = new WeakMap<object, { readonly text: string; readonly template: Template | undefined }>()
/** The last output of a registration's template, with the values it was filled from. */
const sharedOutputs = new WeakMap<object, SharedOutput>()

interface SharedOutput {
  readonly template: Template
  readonly values: readonly (string | undefined)[]
  readonly output: string
  /** Set once a second fill took this output: it was flattened then. */
  shared: boolean
}

/**
 * Templates of texts rendered without a registration to key them by (runtime
 * contexts, a listener's sections), by text: a context every agent renders
 * compiles once instead of once per view (~350 bytes per template and view).
 * Bounded (oldest dropped first), and only for short texts that reference
 * something; a compile error is never kept.
 */
const templatesByText = new Map<string, Template>()
const TEXT_TEMPLATES = 256
const TEXT_TEMPLATE_LENGTH = 4096

function textTemplateOf(name: string, text: string, interpolate: boolean, kind: RenderOwner): Template | undefined {
  if (typeof text !== 'string' || !interpolate || text.length > TEXT_TEMPLATE_LENGTH) return compiled(name, text, interpolate, kind)
  const held = templatesByText.get(text)
  if (held !== undefined) return held
  const template = compiled(name, text, interpolate, kind)
  if (template !== undefined) {
    if (templatesByText.size >= TEXT_TEMPLATES) templatesByText.delete(templatesByText.keys().next().value!)
    templatesByText.set(text, template)
  }
  return template
}

/** The template of `text` for `owner` (a registration; `undefined`: by text, see `templatesByText`). */
export function templateOf(owner: object | undefined, name: string, text: string, interpolate: boolean, kind: RenderOwner): Template | undefined {
  if (owner === undefined) return textTemplateOf(name, text, interpolate, kind)
  const held = sharedTemplates.get(owner)
  if (held !== undefined && held.text === text) return held.template
  const template = compiled(name, text, interpolate, kind)
  sharedTemplates.set(owner, { text, template })
  return template
}

/**
 * Fills `template` for `owner` (a registration), handing out the string an
 * earlier fill with the same values made: a global section rendered with the
 * same variables is one string in every view.
 *
 * A fill is kept as the rope concatenation made it, and flattened (in place)
 * only once a second view takes it: a section that references a per-agent
 * value (`{{cwd}}`) then costs each agent a few rope nodes over the
 * template's shared literals instead of a flat copy of the whole text (~0.9
 * KB per such section and agent), while an output every agent shares is one
 * flat string, which joins faster (a join copies from a rope without
 * flattening it, ~10% slower for those parts).
 */
export function filledFor(owner: object | undefined, template: Template, variables: Variables, label: TemplateOwner): string {
  if (owner === undefined) return fillTemplate(template, variables, label)
  const held = sharedOutputs.get(owner)
  const { refs } = template
  if (held !== undefined && held.template === template) {
    let same = true
    for (let i = 0; same && i < refs.length; i++) same = held.values[i] === variables[refs[i]!] && Object.hasOwn(variables, refs[i]!)
    if (same) {
      if (!held.shared) {
        held.shared = true
        flatten(held.output)
      }
      return held.output
    }
  }
  const output = fillTemplate(template, variables, label)
  sharedOutputs.set(owner, { template, values: refs.map((ref) => variables[ref]), output, shared: false })
  return output
}

/** Whether `template` references a variable in `changed`: a slot whose template does not holds the values it was filled with. */
export function touches(template: Template, changed: ReadonlySet<string>): boolean {
  const { refs } = template
  for (let i = 0; i < refs.length; i++) if (changed.has(refs[i]!)) return true
  return false
}

/** Flattens `text` in place when it is a rope (a character read makes V8 do it once, for every holder). */
function flatten(text: string): void {
  if (text.length > 0 && text.charCodeAt(0) < 0) throw new Error('unreachable: a negative char code')
}
