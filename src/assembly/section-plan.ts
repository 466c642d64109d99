import { SourceKind, type SectionEntry } from './entries.js'
import type { SectionSource } from './provenance.js'

/** The effective sections of a scope, sorted by order then code-unit name. */
export interface SectionPlan {
  readonly entries: readonly SectionEntry[]
  /** The effective sections registered with `complete: true`. */
  readonly complete: readonly SectionEntry[]
  /** The positions of the entries whose text is a signal or a function (read on every assembly). */
  readonly dynamic: readonly number[]
  /** Each static entry's text by position (`''` at a dynamic position): copied, then patched, per assembly. */
  readonly texts: readonly string[]
  /** Each entry's `source`, by position: what the provenance of an assembly lists. */
  readonly sources: readonly SectionSource[]
}

/** The plan of sorted section `entries`, with its complete, dynamic and static-text tables. */
export function sectionPlanOf(entries: readonly SectionEntry[]): SectionPlan {
  const dynamic: number[] = []
  const texts = new Array<string>(entries.length)
  const sources = new Array<SectionSource>(entries.length)
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    sources[i] = entry.source
    if (entry.kind === SourceKind.Static) texts[i] = entry.value!
    else {
      texts[i] = ''
      dynamic.push(i)
    }
  }
  return { entries, complete: entries.filter((entry) => entry.complete), dynamic, texts, sources }
}

type Ordered = { readonly order: number; readonly name: string }

/** The plans' one sort order: by order, then by code-unit name (names are unique within a plan, so it is total). */
export function byOrderThenName(a: Ordered, b: Ordered): number {
  return a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/**
 * Merges a layer's own entries into its parent's sorted plan: the parent's
 * entries minus the names the layer shadows, interleaved with the layer's own
 * entries sorted (in place: pass an array of your own). Linear in the parent
 * plan, so a scope under a large global layer pays for a copy, not for a sort.
 */
export function mergeSorted<E extends Ordered>(base: readonly E[], ownUnsorted: E[]): E[] {
  const own = ownUnsorted.sort(byOrderThenName)
  const shadowed = new Set<string>()
  for (const entry of own) shadowed.add(entry.name)
  const out: E[] = []
  let j = 0
  for (const entry of base) {
    if (shadowed.has(entry.name)) continue
    while (j < own.length && byOrderThenName(own[j]!, entry) < 0) out.push(own[j++]!)
    out.push(entry)
  }
  while (j < own.length) out.push(own[j++]!)
  return out
}
