/**
 * Rendering one item (a section or a runtime context), and the memo of one scope's items. Its rule: an item with the same
 * text and interpolation flag, whose referenced variables hold the same values, keeps its `Fill` object, so what is
 * derived from a fill (a part, a block, the text) is reused by identity.
 */

import { isNamedText } from '../assembly/errors.js'
import { sourceNamed, type SourceTable } from '../assembly/provenance.js'
import { compileTemplate, fillTemplate, type Template } from '../assembly/template.js'
import type { PromptStats } from '../assembly/types.js'
import type { RenderedSubstitution } from './rendered-prompt.js'

export type Variables = Readonly<Record<string, string | undefined>>

export interface RenderItem {
  readonly name: string
  readonly text: string
  readonly interpolate?: boolean
}

/** One rendered item; immutable, so a memo hands the same object out while the item renders the same. */
export interface Fill {
  readonly name: string
  readonly text: string
  readonly interpolate: boolean
  /** `undefined` when the output is the text (no references, or not interpolated). */
  readonly template: Template | undefined
  /** The value of each of `template.refs`, as filled in. */
  readonly values: readonly string[]
  /** `template`'s distinct reference names in first-use order (a part's `variables`), shared by every fill of it. */
  readonly names: readonly string[]
  readonly output: string
  readonly substitutions: readonly RenderedSubstitution[]
}

/** Names item `name` in errors, e.g. `prompt section "intro" in scope "agent-1"`. */
export type RenderOwner = (name: string) => string

export const NONE: readonly never[] = Object.freeze([])

function substitutionsOf(template: Template, values: readonly string[]): readonly RenderedSubstitution[] {
  let offset = template.parts[0]!.length
  return Object.freeze(
    values.map((value, i) => {
      const start = offset
      offset += value.length + template.parts[i + 1]!.length
      return Object.freeze({ variable: template.refs[i]!, start, end: start + value.length })
    }),
  )
}

/**
 * Renders `item` (its shape checked by the caller) against `variables`, reusing `previous`'s template for the same text.
 * Throws the template's errors (a malformed, unknown or valueless reference, a non-string value) naming the item.
 */
export function fillOf(item: RenderItem, variables: Variables, owner: RenderOwner, previous?: Fill): Fill {
  const { name, text } = item
  const interpolate = item.interpolate !== false
  let template: Template | undefined
  let names: readonly string[] = NONE
  if (previous !== undefined && previous.text === text && previous.interpolate === interpolate) {
    template = previous.template
    names = previous.names
  } else if (interpolate && text.includes('{{')) {
    const compiled = compileTemplate(text, () => owner(name))
    if (compiled.refs.length > 0) {
      template = compiled
      names = Object.freeze([...new Set(compiled.refs)])
    }
  }
  if (template === undefined) return { name, text, interpolate, template, values: NONE, names, output: text, substitutions: NONE }
  const output = fillTemplate(template, variables, () => owner(name))
  const values = template.refs.map((ref) => variables[ref]!)
  return { name, text, interpolate, template, values, names, output, substitutions: substitutionsOf(template, values) }
}

/** Whether `fill` is what `item` renders to; `sameValues`: every variable holds the value `fill` was last checked against. */
function stillFits(fill: Fill, item: RenderItem, variables: Variables, sameValues = false): boolean {
  if (fill.text !== item.text || fill.interpolate !== (item.interpolate !== false)) return false
  const { template, values } = fill
  if (template === undefined || sameValues) return true
  const { refs } = template
  for (let i = 0; i < refs.length; i++) if (variables[refs[i]!] !== values[i] || !Object.hasOwn(variables, refs[i]!)) return false
  return true
}

/** The last fill of each registration, so scopes rendering a global section with the same values share one fill. */
const sharedFills = new WeakMap<object, Fill>()

/**
 * The last render of one scope's sections (or contexts), by position. An item moved farther than one place (or new) is
 * looked up by name, unless its registration was never rendered anywhere (then it is new here too), so a churn step that
 * adds one registered item builds no by-name table of the whole last render.
 */
export class RenderMemo {
  #fills: readonly Fill[] = []
  #byName: Map<string, Fill> | undefined
  /** A copy of the last render's variables: every fill in `#fills` holds these values. */
  #variables: Variables | undefined
  #variableCount = 0

  /** Whether `variables` has exactly the own names and values of the last render's. */
  #sameVariables(variables: Variables): boolean {
    const last = this.#variables
    if (last === undefined) return false
    let count = 0
    for (const name in variables) {
      if (!Object.hasOwn(variables, name)) continue
      if (last[name] !== variables[name] || !Object.hasOwn(last, name)) return false
      count++
    }
    return count === this.#variableCount
  }

  #lastNamed(name: string): Fill | undefined {
    return (this.#byName ??= new Map(this.#fills.map((fill) => [fill.name, fill]))).get(name)
  }

  /**
   * The fills of `items`, reusing every fill that still fits (the same array when all did), counted in `stats`. Commits
   * nothing when an item throws. `sources` names the registration each item may share a fill with.
   */
  render(
    items: readonly RenderItem[],
    variables: Variables,
    owner: RenderOwner,
    stats: PromptStats,
    sources: SourceTable<{ readonly name: string }> | undefined,
    invalid: (index: number) => Error,
  ): readonly Fill[] {
    const last = this.#fills
    const sameValues = this.#sameVariables(variables)
    let next: Fill[] | undefined
    let renders = 0
    // Item i was last[i + shift]: one removed item shifts the rest by +1, one inserted by -1.
    let shift = 0
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (!isNamedText(item)) throw invalid(i)
      let previous: Fill | undefined = last[i + shift]
      // The item's registration, looked up at most once (`null`: not yet).
      let source: object | undefined | null = null
      if (previous?.name !== item.name) {
        if (last[i + shift + 1]?.name === item.name) previous = last[i + ++shift]
        else if (i + shift > 0 && last[i + shift - 1]?.name === item.name) previous = last[i + --shift]
        else {
          source = sources === undefined ? undefined : sourceNamed(sources, item.name, i)
          previous = source !== undefined && !sharedFills.has(source) ? undefined : this.#lastNamed(item.name)
        }
      }
      let fill: Fill
      if (previous !== undefined && stillFits(previous, item, variables, sameValues)) fill = previous
      else {
        if (source === null) source = sources === undefined ? undefined : sourceNamed(sources, item.name, i)
        const shared = source === undefined ? undefined : sharedFills.get(source)
        if (shared !== undefined && stillFits(shared, item, variables)) fill = shared
        else {
          fill = fillOf(item, variables, owner, previous ?? shared)
          if (source !== undefined) sharedFills.set(source, fill)
        }
        renders++
      }
      if (next === undefined && fill !== last[i]) {
        next = new Array<Fill>(items.length)
        for (let j = 0; j < i; j++) next[j] = last[j]!
      }
      if (next !== undefined) next[i] = fill
    }
    if (next === undefined && items.length !== last.length) next = last.slice(0, items.length)
    stats.sectionRenders += renders
    stats.renderCacheHits += items.length - renders
    if (next !== undefined) {
      this.#fills = next
      this.#byName = undefined
    }
    if (!sameValues) {
      this.#variables = { ...variables }
      this.#variableCount = Object.keys(this.#variables).length
    }
    return this.#fills
  }
}
