import { compileTemplate, fillTemplate, type Template } from './template.js'
import type { PromptStats } from './stats.js'

/** A section or context as it reaches the renderer. */
export interface RenderItem {
  readonly name: string
  readonly text: string
  readonly interpolate?: boolean
}

/** One rendered item: what it was rendered from and what it rendered to. */
interface RenderSlot {
  readonly name: string
  readonly text: string
  readonly interpolate: boolean
  /** `undefined` when the item is literal (`interpolate: false`) or has no `{{`. */
  readonly template: Template | undefined
  /** The value substituted for each of `template.refs`, in order. */
  readonly values: readonly string[]
  readonly output: string
}

/**
 * The last render of one scope's sections (or contexts). An item whose name,
 * text and interpolation flag match a slot, and whose referenced variables
 * still hold the same values, reuses the slot's output without scanning; an
 * item whose values changed is re-substituted from its compiled template;
 * only a changed text is scanned again. When every item hits, in the same
 * positions, the caller reuses the joined result as well.
 */
export class RenderMemo {
  /** Slots by position in the last render. */
  slots: readonly RenderSlot[] = []
  /** Slots by name, rebuilt lazily after a render that moved something. */
  #byName: Map<string, RenderSlot> | undefined
  /** The joined text of `slots`, cached by the caller; cleared whenever `slots` change. */
  joined: string | undefined

  /**
   * Renders `items` against `variables`, reusing what it can. Returns the
   * slots (the same array as before when nothing changed). Errors are thrown
   * before the memo is touched, so a failed render poisons nothing.
   */
  render(
    items: readonly RenderItem[],
    variables: Readonly<Record<string, string | undefined>>,
    kind: string,
    stats: PromptStats | undefined,
  ): readonly RenderSlot[] {
    const previous = this.slots
    let next: RenderSlot[] | undefined = items.length === previous.length ? undefined : []
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      const interpolate = item.interpolate !== false
      let candidate: RenderSlot | undefined = previous[i]
      if (candidate === undefined || candidate.name !== item.name) candidate = this.#slotNamed(item.name)
      let slot: RenderSlot
      if (candidate !== undefined && candidate.text === item.text && candidate.interpolate === interpolate) {
        slot = valuesHold(candidate, variables) ? candidate : refill(candidate, variables, kind)
      } else {
        slot = renderItem(item, interpolate, variables, kind)
      }
      if (slot === candidate) {
        if (stats) stats.renderCacheHits++
      } else if (stats) stats.sectionRenders++
      if (next === undefined && slot !== previous[i]) next = previous.slice(0, i)
      next?.push(slot)
    }
    if (next === undefined) return previous
    this.slots = next
    this.#byName = undefined
    this.joined = undefined
    return next
  }

  #slotNamed(name: string): RenderSlot | undefined {
    if (this.#byName === undefined) {
      this.#byName = new Map()
      for (const slot of this.slots) this.#byName.set(slot.name, slot)
    }
    return this.#byName.get(name)
  }
}

function valuesHold(slot: RenderSlot, variables: Readonly<Record<string, string | undefined>>): boolean {
  const refs = slot.template?.refs
  if (refs === undefined) return true
  for (let i = 0; i < refs.length; i++) {
    const name = refs[i]!
    if (variables[name] !== slot.values[i] || !Object.hasOwn(variables, name)) return false
  }
  return true
}

function ownerOf(kind: string, name: string): string {
  return `${kind} "${name}"`
}

function refill(slot: RenderSlot, variables: Readonly<Record<string, string | undefined>>, kind: string): RenderSlot {
  const template = slot.template!
  const output = fillTemplate(template, variables, ownerOf(kind, slot.name))
  return { ...slot, values: template.refs.map((name) => variables[name]!), output }
}

/** Renders one item from scratch; also the memo-less path. */
export function renderItem(
  item: RenderItem,
  interpolate: boolean,
  variables: Readonly<Record<string, string | undefined>>,
  kind: string,
): RenderSlot {
  const { name, text } = item
  if (typeof text !== 'string') {
    throw new TypeError(`${ownerOf(kind, String(name))} text must be a string when rendering (got ${typeof text})`)
  }
  if (!interpolate || !text.includes('{{')) {
    return { name, text, interpolate, template: undefined, values: [], output: text }
  }
  const template = compileTemplate(text, ownerOf(kind, name))
  if (template.refs.length === 0) return { name, text, interpolate, template: undefined, values: [], output: text }
  const output = fillTemplate(template, variables, ownerOf(kind, name))
  return { name, text, interpolate, template, values: template.refs.map((ref) => variables[ref]!), output }
}
