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

/** The required sections as collected (fresh copies, in registry order), with their `rank` and the others' `gap`. */
type PinnedSections = NonNullable<ReturnType<typeof pinRequired>>

/** Copies the required sections of `collected` (built from `entries`, index for index); `undefined` when there are none. */
export function pinRequired(entries: readonly SectionEntry[], collected: readonly AssembledSection[]) {
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

/** The anchor of each required section among `items`, by rank (`undefined`: none). */
function anchorsOf(items: readonly AssembledSection[], { rank, sections }: PinnedSections): (AssembledSection | undefined)[] {
  const anchors = new Array<AssembledSection | undefined>(sections.length)
  let last = -1
  for (const item of items) {
    const r = rank.get(item.name)
    if (r === undefined || r <= last) continue
    anchors[r] = item
    last = r
  }
  return anchors
}

/** The walk described above. */
function place(items: readonly AssembledSection[], pinned: PinnedSections): AssembledSection[] {
  const { rank, gap, sections: required } = pinned
  const anchors = anchorsOf(items, pinned)
  const out: AssembledSection[] = []
  let placed = 0
  for (const item of items) {
    const r = rank.get(item.name)
    if (r !== undefined) {
      if (anchors[r] !== item) continue
      while (placed < r) out.push(required[placed++]!)
      out.push(verbatim(item, required[r]!) ? item : required[r]!)
      placed++
      continue
    }
    const g = gap.get(item.name)
    if (g !== undefined) while (placed < g && anchors[placed] === undefined) out.push(required[placed++]!)
    out.push(item)
  }
  while (placed < required.length) out.push(required[placed++]!)
  return out
}

const NOTHING_RESTORED: readonly string[] = Object.freeze([])

/**
 * Restores the pinned required sections into `returned` (the listener's sections, or `[complete]`):
 * `returned` itself when nothing moved, else a new array. `restored` names the required sections the
 * listener (`listened`: what it returned) dropped, edited or moved out of order, in registry order.
 */
export function restoreRequired(
  returned: AssembledSection[],
  listened: readonly AssembledSection[],
  pinned: PinnedSections | undefined,
): { readonly sections: AssembledSection[]; readonly restored: readonly string[] } {
  if (pinned === undefined) return { sections: returned, restored: NOTHING_RESTORED }
  const sections = place(returned, pinned)
  const anchors = anchorsOf(listened, pinned)
  const restored = pinned.sections.filter((s, r) => anchors[r] === undefined || !verbatim(anchors[r], s)).map((s) => s.name)
  return { sections: sameItems(sections, returned) ? returned : sections, restored }
}
