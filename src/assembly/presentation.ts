import type { SectionEntry } from './entries.js'
import type { AssembledSection } from './types.js'

/** Fresh, mutable sections for `entries` with their collected `texts` (`out[i].text === texts[i]`); the caller owns them. */
export function sectionsOf(entries: readonly SectionEntry[], texts: readonly string[]): AssembledSection[] {
  const out = new Array<AssembledSection>(entries.length)
  for (let i = 0; i < entries.length; i++) {
    const { name, order, interpolate, complete } = entries[i]!
    const section: AssembledSection = { name, order, text: texts[i]! }
    if (!interpolate) section.interpolate = false
    if (complete) section.complete = true
    out[i] = section
  }
  return out
}
