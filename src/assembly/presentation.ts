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
import { hiddenState } from './hidden-state.js'
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

const STATE = hiddenState<DeferredState>(
  'promptloom.deferredSections',
  'an assembly\'s sections accessor was called on an object that is not an assemble() result; read "sections" from the object assemble() returned',
)

// Shared by every deferred result, so all of them share one hidden class (a
// fresh getter per result gave each its own, and every read of one megamorphic).
const SECTIONS: PropertyDescriptor = {
  get(this: unknown): AssembledSection[] {
    const state = STATE.of(this)
    if (state.sections === undefined) {
      state.deferred.handedOut = true
      state.sections = sectionsOf(state.deferred.plan.entries, state.texts)
    }
    return state.sections
  },
  set(this: object, value: AssembledSection[]) {
    // As for a frozen object's data property (module code is strict).
    if (Object.isFrozen(this)) throw new TypeError("Cannot assign to read only property 'sections' of object '#<Object>'")
    const state = STATE.of(this)
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
  const assembly = {} as PromptAssembly
  STATE.attach(assembly, { deferred, texts, sections: undefined })
  Object.defineProperty(assembly, 'sections', SECTIONS)
  assembly.contexts = contexts
  assembly.variables = variables
  assembly.tools = tools
  return assembly
}

/** Whether `assembly.sections` is still the untouched deferred array (never read, assigned, deleted or redefined). */
export function stillDeferred(assembly: object, deferred: DeferredSections): boolean {
  // The shared getter reads the receiver's own state, so the getter alone says the array is the deferred one.
  return !deferred.handedOut && Object.getOwnPropertyDescriptor(assembly, 'sections')?.get === SECTIONS.get
}
