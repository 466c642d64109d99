/**
 * The fresh, mutable presentation an `assemble()` result hands out, built
 * only as far as somebody reads it. With nobody listening to the assemble
 * waterfall, the result's `sections` is an own enumerable accessor that
 * builds the plain sections array on first read (or keeps what is assigned):
 * spread, `JSON.stringify`, `structuredClone`, `Object.keys` and in-place
 * edits see a real `Array` of fresh objects, exactly as if it had been built
 * eagerly, while a step that only renders never builds it (the renderer
 * reads the plan and the collected texts instead, see `DeferredSections`).
 */

import type { SectionEntry } from './entries.js'
import type { DeferredSections } from './provenance.js'
import type { AssembledContext, AssembledSection, PromptAssembly, ToolSchema } from './types.js'

/** Fresh sections for `entries` with their collected `texts` (`out[i].text === texts[i]`). */
export function sectionsOf(entries: readonly SectionEntry[], texts: readonly string[]): AssembledSection[] {
  const out = new Array<AssembledSection>(entries.length)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const { name, order } = entry
    const text = texts[i]!
    if (entry.interpolate) {
      out[i] = entry.complete ? { name, order, text, complete: true } : { name, order, text }
    } else {
      out[i] = entry.complete
        ? { name, order, text, interpolate: false, complete: true }
        : { name, order, text, interpolate: false }
    }
  }
  return out
}

/** What a deferred result keeps for the `sections` accessor every result shares. */
interface DeferredState {
  readonly deferred: DeferredSections
  readonly texts: readonly string[]
  sections: AssembledSection[] | undefined
}

/**
 * Where a deferred result keeps its state: a non-enumerable symbol-keyed own
 * property (spread, JSON, `structuredClone` and `Object.keys` never see it),
 * read through `this`, so a proxy around a result or an object inheriting
 * from one reads the result's own state.
 */
const STATE: unique symbol = Symbol('promptloom.deferredSections')

type DeferredAssembly = PromptAssembly & { readonly [STATE]?: DeferredState }

function stateOf(receiver: unknown): DeferredState {
  const state = typeof receiver === 'object' && receiver !== null ? (receiver as DeferredAssembly)[STATE] : undefined
  if (state === undefined) {
    throw new TypeError('an assembly\'s sections accessor was called on an object that is not an assemble() result; read "sections" from the object assemble() returned')
  }
  return state
}

// Shared by every deferred result, so all of them share one hidden class (a
// fresh getter per result gave each its own, and every read of one megamorphic).
const SECTIONS: PropertyDescriptor = {
  get(this: unknown): AssembledSection[] {
    const state = stateOf(this)
    if (state.sections === undefined) {
      state.deferred.handedOut = true
      state.sections = sectionsOf(state.deferred.plan.entries, state.texts)
    }
    return state.sections
  },
  set(this: object, value: AssembledSection[]) {
    // As for a frozen object's data property (module code is strict).
    if (Object.isFrozen(this)) throw new TypeError("Cannot assign to read only property 'sections' of object '#<Object>'")
    const state = stateOf(this)
    state.deferred.handedOut = true
    state.sections = value
  },
  enumerable: true,
  configurable: true,
}

/**
 * An assembly whose `sections` are `deferred.plan`'s entries with `texts`,
 * built on first read of `sections`; reading or assigning it sets
 * `deferred.handedOut` (a deletion or redefinition, which no accessor hears,
 * is seen by `stillDeferred`). Keys in the order an eager result has them.
 */
export function deferredAssembly(
  deferred: DeferredSections,
  texts: readonly string[],
  contexts: AssembledContext[],
  variables: Record<string, string | undefined>,
  tools: ToolSchema[],
): PromptAssembly {
  // The state first: a key of its own, so the map chain of these results starts apart from every
  // other object's (see prompt-blocks.ts); `sections` is still the first key listed.
  const assembly = {} as PromptAssembly
  const state: DeferredState = { deferred, texts, sections: undefined }
  Object.defineProperty(assembly, STATE, { value: state })
  Object.defineProperty(assembly, 'sections', SECTIONS)
  assembly.contexts = contexts
  assembly.variables = variables
  assembly.tools = tools
  return assembly
}

/** Whether `assembly.sections` is still the untouched deferred array (never read, assigned, deleted or redefined). */
export function stillDeferred(assembly: object, deferred: DeferredSections): boolean {
  return (
    !deferred.handedOut &&
    Object.getOwnPropertyDescriptor(assembly, 'sections')?.get === SECTIONS.get &&
    (assembly as DeferredAssembly)[STATE]?.deferred === deferred
  )
}
