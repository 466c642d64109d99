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
  /**
   * Each entry's `source`, by position: what the provenance of an assembly
   * lists. Kept beside the entries so a patched plan copies it instead of
   * reading every entry again (entries lie all over the heap; this array is
   * one block).
   */
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

/** A plan merged from `base` and a layer's `own` entries (in no particular order: only their identities are compared). */
export interface MergedPlan {
  readonly base: SectionPlan
  readonly own: readonly SectionEntry[]
  readonly plan: SectionPlan
}

/** The merge of `base` and `own` from scratch (`own` is sorted in place and kept). */
export function mergedPlan(base: SectionPlan, own: SectionEntry[]): MergedPlan {
  return { base, own, plan: sectionPlanOf(mergeSorted(base.entries, own)) }
}

/** More own entries changed than this, and a scope's plan is merged again instead of patched. */
const PATCH_LIMIT = 8

/**
 * The plan of `last.base` merged with `own`, patched from `last.plan`: each
 * own entry that left is cut out (and the parent's entry it shadowed put
 * back), each new one put in by binary search (cutting out the parent's
 * entry it shadows). After one registration or disposal in an agent under a
 * large global layer that is a copy of the plan's arrays and a few searches,
 * where a merge compares and re-pushes every entry. Equal to `mergedPlan`
 * by construction (the plan is sorted in one total order); `undefined` when
 * too much changed to be worth patching.
 */
export function patchedPlan(last: MergedPlan, own: readonly SectionEntry[]): MergedPlan | undefined {
  const left = notIn(last.own, own)
  const came = notIn(own, last.own)
  if (left === undefined || came === undefined || left.length + came.length > PATCH_LIMIT) return undefined
  const patch = new PlanPatch(last.plan)
  const baseByName = namesOf(last.base)
  for (const entry of left) {
    patch.remove(entry)
    const shadowed = baseByName.get(entry.name)
    if (shadowed !== undefined) patch.insert(shadowed)
  }
  for (const entry of came) {
    const shadowed = baseByName.get(entry.name)
    if (shadowed !== undefined) patch.remove(shadowed)
    patch.insert(entry)
  }
  return { base: last.base, own, plan: patch.plan() }
}

/** The entries of `a` that are not in `b` (by identity); `undefined` when the lists are too long to compare pairwise. */
function notIn(a: readonly SectionEntry[], b: readonly SectionEntry[]): SectionEntry[] | undefined {
  if (a.length * b.length > 1024) return undefined
  const out: SectionEntry[] = []
  for (const entry of a) if (!b.includes(entry)) out.push(entry)
  return out
}

// Each base plan's entries by name, made on the first patch against it (a
// preset's or the global plan, shared by every agent under it).
const baseNames = new WeakMap<SectionPlan, Map<string, SectionEntry>>()

function namesOf(plan: SectionPlan): Map<string, SectionEntry> {
  let names = baseNames.get(plan)
  if (names === undefined) {
    names = new Map()
    for (const entry of plan.entries) names.set(entry.name, entry)
    baseNames.set(plan, names)
  }
  return names
}

/** Copies of a plan's arrays, edited one entry at a time in sorted position. */
class PlanPatch {
  readonly #entries: SectionEntry[]
  readonly #texts: string[]
  readonly #sources: SectionSource[]
  #dynamic: number[]
  #complete: readonly SectionEntry[]
  #completeMoved = false

  constructor(from: SectionPlan) {
    this.#entries = from.entries.slice()
    this.#texts = from.texts.slice()
    this.#sources = from.sources.slice()
    this.#dynamic = from.dynamic.slice()
    this.#complete = from.complete
  }

  /** Where `entry` sits, or would sit, in sorted order. */
  #position(entry: SectionEntry): number {
    const entries = this.#entries
    let low = 0
    let high = entries.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (byOrderThenName(entries[mid]!, entry) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  remove(entry: SectionEntry): void {
    const at = this.#position(entry)
    if (this.#entries[at] !== entry) throw new Error(`unreachable: ${entry.noun} "${entry.name}" is not in the plan it leaves`)
    this.#entries.splice(at, 1)
    this.#texts.splice(at, 1)
    this.#sources.splice(at, 1)
    const dynamic = this.#dynamic
    let write = 0
    for (let read = 0; read < dynamic.length; read++) {
      const position = dynamic[read]!
      if (position !== at) dynamic[write++] = position > at ? position - 1 : position
    }
    dynamic.length = write
    if (entry.complete) this.#completeMoved = true
  }

  insert(entry: SectionEntry): void {
    const at = this.#position(entry)
    const isStatic = entry.kind === SourceKind.Static
    this.#entries.splice(at, 0, entry)
    this.#texts.splice(at, 0, isStatic ? entry.value! : '')
    this.#sources.splice(at, 0, entry.source)
    const dynamic = this.#dynamic
    let index = dynamic.length
    for (let i = 0; i < dynamic.length; i++) {
      if (dynamic[i]! >= at) {
        if (index === dynamic.length) index = i
        dynamic[i]!++
      }
    }
    if (!isStatic) dynamic.splice(index, 0, at)
    if (entry.complete) this.#completeMoved = true
  }

  plan(): SectionPlan {
    const entries = this.#entries
    const complete = this.#completeMoved ? entries.filter((entry) => entry.complete) : this.#complete
    return { entries, complete, dynamic: this.#dynamic, texts: this.#texts, sources: this.#sources }
  }
}
