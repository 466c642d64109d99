/**
 * Required sections (SPEC §5): after the `system-prompt/assemble` waterfall
 * every effective `required: true` section is back, with the text the
 * registry collected, whatever the listeners returned.
 *
 * Where each one goes, precisely. Number the required sections 1…k in
 * registry order (order, then code-unit name), and give every other
 * registry section its gap: how many required sections precede it in that
 * order. In the listener's returned sections, an item named like required
 * section i is an anchor when it is the first such item and i is above every
 * earlier anchor's number; any other item with a required name (a second
 * copy, or one moved before an earlier required section) is dropped. The
 * required sections without an anchor are missing. Then walk the returned
 * sections left to right, with `placed` = how many required sections are out:
 *
 * - an anchor of section i: place sections placed+1…i-1 (all missing), then
 *   section i there, as returned when its text and flags are the collected
 *   ones, else restored to them;
 * - a registry section with gap g: first place the missing sections
 *   placed+1…g, stopping at the first anchored one, then it;
 * - a section only the listener added stays where it is;
 *
 * and place the rest at the end. So the listener's other sections keep their
 * returned order, the required ones are in registry order among themselves
 * and stay where the listener kept them, a dropped one returns right before
 * the first returned registry section that followed it in the registry, and
 * an untouched presentation comes out unchanged.
 *
 *   registry   a  R1  b  R2  c          listener returns  c  b  x
 *   gaps       0      1      2          result            R1 R2 c  b  x
 */

import type { SectionEntry } from './entries.js'
import type { AssembledSection } from './types.js'

/** Where the required sections of one sorted plan sit. */
interface RequiredLayout {
  /** Each required section's index in the plan. */
  readonly indices: readonly number[]
  /** A required section's rank (0-based) among the required ones, by name. */
  readonly rank: ReadonlyMap<string, number>
  /** For every other section, how many required sections precede it in the plan. */
  readonly gap: ReadonlyMap<string, number>
}

function layoutOf(entries: readonly SectionEntry[]): RequiredLayout | undefined {
  const indices: number[] = []
  const rank = new Map<string, number>()
  const gap = new Map<string, number>()
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    if (entry.required) {
      rank.set(entry.name, indices.length)
      indices.push(i)
    } else gap.set(entry.name, indices.length)
  }
  return indices.length === 0 ? undefined : { indices, rank, gap }
}

/** The required sections of one assembly as collected, copied before any listener could touch them. */
export interface PinnedSections {
  readonly layout: RequiredLayout
  /** Fresh copies of the collected required sections, in registry order. */
  readonly sections: readonly AssembledSection[]
}

/**
 * Copies the required sections of `collected` (the sections built from
 * `entries`, index for index) before the waterfall; `undefined` when the plan
 * has none, which is all the hot path pays for.
 */
export function pinRequired(entries: readonly SectionEntry[], collected: readonly AssembledSection[]): PinnedSections | undefined {
  const layout = layoutOf(entries)
  if (layout === undefined) return undefined
  return { layout, sections: layout.indices.map((i) => ({ ...collected[i]! })) }
}

function verbatim(item: AssembledSection, pinned: AssembledSection): boolean {
  return (
    item.text === pinned.text &&
    (item.interpolate !== false) === (pinned.interpolate !== false) &&
    (item.complete === true) === (pinned.complete === true)
  )
}

/** The walk described above; `kept` collects the required names the listener returned verbatim and in order. */
function place(items: readonly AssembledSection[], pinned: PinnedSections, kept: Set<string> | undefined): AssembledSection[] {
  const { rank, gap } = pinned.layout
  const required = pinned.sections
  // Anchors: the first item of each required name whose rank is above every earlier anchor's.
  const anchored = new Array<boolean>(required.length).fill(false)
  const anchors = new Set<AssembledSection>()
  let last = -1
  for (const item of items) {
    const r = rank.get(item.name)
    if (r !== undefined && r > last && !anchored[r]) {
      anchored[r] = true
      anchors.add(item)
      last = r
    }
  }
  const out: AssembledSection[] = []
  let placed = 0
  for (const item of items) {
    const r = rank.get(item.name)
    if (r !== undefined) {
      if (!anchors.has(item)) continue
      while (placed < r) out.push(required[placed++]!)
      if (verbatim(item, required[r]!)) {
        out.push(item)
        kept?.add(item.name)
      } else out.push(required[r]!)
      placed++
      continue
    }
    const g = gap.get(item.name)
    // Missing required sections go back before the first registry section that followed them; an anchored one waits for its anchor.
    if (g !== undefined) while (placed < g && !anchored[placed]) out.push(required[placed++]!)
    out.push(item)
  }
  while (placed < required.length) out.push(required[placed++]!)
  return out
}

function same(a: readonly AssembledSection[], b: readonly AssembledSection[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const NOTHING_RESTORED: readonly string[] = Object.freeze([])

/** The sections of an assembly with its required ones back, and which of them had to be restored. */
export interface RestoredSections {
  /** `returned` itself when nothing moved (the common case), else a new array. */
  readonly sections: AssembledSection[]
  /** The required sections a listener dropped, edited or moved out of order, in registry order. */
  readonly restored: readonly string[]
}

/**
 * Restores the pinned required sections into `returned` (the listener's
 * sections, or `[complete]` when the plan has a complete section). What was
 * restored is judged against `listened`, the sections the listener returned,
 * also when `returned` is the complete section alone.
 */
export function restoreRequired(
  returned: AssembledSection[],
  listened: readonly AssembledSection[],
  pinned: PinnedSections | undefined,
): RestoredSections {
  if (pinned === undefined) return { sections: returned, restored: NOTHING_RESTORED }
  const kept = new Set<string>()
  const placed = place(listened, pinned, kept)
  const sections = returned === listened ? placed : place(returned, pinned, undefined)
  const restored = pinned.sections.filter((s) => !kept.has(s.name)).map((s) => s.name)
  return {
    sections: same(sections, returned) ? returned : sections,
    restored: restored.length === 0 ? NOTHING_RESTORED : restored,
  }
}
