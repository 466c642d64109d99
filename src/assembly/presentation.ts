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

/**
 * An assembly whose `sections` are `deferred.plan`'s entries with `texts`,
 * built on first read of `sections`; reading or assigning it sets
 * `deferred.handedOut`, and `deferred.accessor` is its getter (a deletion or
 * redefinition, which no accessor hears, is seen by comparing it). Keys in
 * the order an eager result has them.
 */
export function deferredAssembly(
  deferred: DeferredSections,
  texts: readonly string[],
  contexts: AssembledContext[],
  variables: Record<string, string | undefined>,
  tools: ToolSchema[],
): PromptAssembly {
  let sections: AssembledSection[] | undefined
  const assembly = {} as PromptAssembly
  Object.defineProperty(assembly, 'sections', {
    // An arrow in an assignment gets no inferred name, so a build that keeps
    // function names (tsx, esbuild keepNames) adds no naming call per result.
    get: (deferred.accessor = (): AssembledSection[] => {
      if (sections === undefined) {
        deferred.handedOut = true
        sections = sectionsOf(deferred.plan.entries, texts)
      }
      return sections
    }),
    set(this: object, value: AssembledSection[]) {
      // As for a frozen object's data property (module code is strict).
      if (Object.isFrozen(this)) throw new TypeError("Cannot assign to read only property 'sections' of object '#<Object>'")
      deferred.handedOut = true
      sections = value
    },
    enumerable: true,
    configurable: true,
  })
  assembly.contexts = contexts
  assembly.variables = variables
  assembly.tools = tools
  return assembly
}

/** Whether `assembly.sections` is still the untouched deferred array (never read, assigned, deleted or redefined). */
export function stillDeferred(assembly: object, deferred: DeferredSections): boolean {
  return !deferred.handedOut && Object.getOwnPropertyDescriptor(assembly, 'sections')?.get === deferred.accessor
}
