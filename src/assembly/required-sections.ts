/**
 * Required sections (SPEC §5): after the `system-prompt/assemble` waterfall every effective
 * `required: true` section is back, with the text the registry collected.
 *
 * Number the required sections 1…k in registry order, and give every other registry section its gap:
 * how many required sections precede it. In the listener's sections, an item named like required
 * section i is an anchor when it is the first such item and i is above every earlier anchor's number;
 * other items with a required name are dropped. Walk the returned sections with `placed` = how many
 * required sections are out: an anchor of i places the missing ones placed+1…i-1, then i (restored
 * unless verbatim); a registry section with gap g first places missing ones up to g, stopping at the
 * first anchored one; a listener's own section stays. The rest go at the end. So a dropped one
 * returns right before the first returned registry section that followed it, and an untouched
 * presentation comes out unchanged.
 *
 *   registry   a  R1  b  R2  c          listener returns  c  b  x
 *   gaps       0      1      2          result            R1 R2 c  b  x
 */

import type { SectionEntry } from './entries.js'
import type { AssembledSection } from './types.js'
import { sameItems } from './view.js'

/** The required sections of one assembly as collected, copied before any listener could touch them. */
export interface PinnedSections {
  /** Fresh copies of the collected required sections, in registry order. */
  readonly sections: readonly AssembledSection[]
  /** A required section's rank (0-based) among them, by name. */
  readonly rank: ReadonlyMap<string, number>
  /** For every other registry section, how many required sections precede it. */
  readonly gap: ReadonlyMap<string, number>
}

/** Copies the required sections of `collected` (built from `entries`, index for index); `undefined` when there are none. */
export function pinRequired(entries: readonly SectionEntry[], collected: readonly AssembledSection[]): PinnedSections | undefined {
  const sections: AssembledSection[] = []
  const rank = new Map<string, number>()
  const gap = new Map<string, number>()
  entries.forEach((entry, i) => {
    if (!entry.required) gap.set(entry.name, sections.length)
    else {
      rank.set(entry.name, sections.length)
      sections.push({ ...collected[i]! })
    }
  })
  return sections.length === 0 ? undefined : { sections, rank, gap }
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
  const { rank, gap, sections: required } = pinned
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
    if (g !== undefined) while (placed < g && !anchored[placed]) out.push(required[placed++]!)
    out.push(item)
  }
  while (placed < required.length) out.push(required[placed++]!)
  return out
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
 * Restores the pinned required sections into `returned` (the listener's sections, or `[complete]`).
 * What was restored is judged against `listened`, the sections the listener returned.
 */
export function restoreRequired(returned: AssembledSection[], listened: readonly AssembledSection[], pinned: PinnedSections | undefined): RestoredSections {
  if (pinned === undefined) return { sections: returned, restored: NOTHING_RESTORED }
  const kept = new Set<string>()
  const placed = place(listened, pinned, kept)
  const sections = returned === listened ? placed : place(returned, pinned, undefined)
  const restored = pinned.sections.filter((s) => !kept.has(s.name)).map((s) => s.name)
  return {
    sections: sameItems(sections, returned) ? returned : sections,
    restored: restored.length === 0 ? NOTHING_RESTORED : restored,
  }
}
