/**
 * How a plan's entries differ from the ones a render memo last committed, by
 * entry identity alone: a few removals and insertions around runs of kept
 * entries, found without reading the entries themselves.
 *
 *     before  [a][b][x][c][d][e]
 *     after   [a][b][c][d][y][e]     removed: 2 (x)   inserted: 4 (y)
 *
 * Registrations are immutable entries, so a kept entry has the name and flag
 * its old slot has; its text (which a dynamic section can change) and its
 * template's variables are still compared, and a slot where either moved is
 * listed for a render like an inserted one. An alignment that needs more
 * than a few edits gives up (`undefined`): the memo's per-item path is then
 * no slower than the edits would be.
 */

import type { Template } from '../assembly/template.js'
import { filledFor, ownerOf, templateOf, touches, type RenderKey, type RenderOwner } from './shared-templates.js'

type Variables = Readonly<Record<string, string | undefined>>

/** The edits from the last committed entries to the new ones (positions ascending). */
export interface EntryEdits {
  /** Old positions whose entry is gone. */
  readonly removed: readonly number[]
  /** New positions to render: a new entry, or a kept one whose text changed or whose template references a changed variable. */
  readonly at: readonly number[]
  /** Parallel to `at`: the old position of the same entry (-1: a new entry). */
  readonly from: readonly number[]
}

/** How far ahead (in old slots) a mismatch looks for the new entry before taking it for an insertion. */
const LOOKAHEAD = 4
/** The most removals plus insertions an alignment takes; past it, `entryEditsOf` gives up. */
export const MAX_ENTRY_EDITS = 8

/**
 * The edits that turn `before` (the entries of the last commit, with their
 * `texts` and `templates`) into `after` (with texts `given`), given the
 * variables that `changed` since; `undefined` when they are more than
 * `MAX_ENTRY_EDITS` removals and insertions, or when a removed entry and an
 * inserted one share a name (a moved or re-registered section: the per-item
 * path reuses its output by name). With `dynamic` (the positions in `after`
 * whose text can differ from what the same entry had last time, ascending),
 * only those texts are compared.
 */
export function entryEditsOf(
  before: readonly unknown[],
  after: readonly { readonly name: string }[],
  texts: readonly string[],
  templates: readonly (Template | undefined)[],
  given: readonly string[],
  changed: ReadonlySet<string> | null,
  dynamic: readonly number[] | undefined,
): EntryEdits | undefined {
  const removed: number[] = []
  const at: number[] = []
  const from: number[] = []
  const count = after.length
  const length = before.length
  let inserted = 0
  let i = 0
  let j = 0
  // The next position of `dynamic` to compare.
  let p = 0
  while (i < count) {
    // A run of kept entries, the common case: one identity comparison per slot.
    const start = i
    const offset = j - i
    // The same plan array again (a signal or function text changed, the plan did not): one kept run, nothing to compare.
    if (after === before) i = j = count
    else {
      while (i < count && j < length && after[i] === before[j]) {
        i++
        j++
      }
    }
    if (i > start) {
      if (dynamic !== undefined && changed === null) {
        for (; p < dynamic.length && dynamic[p]! < i; p++) {
          const k = dynamic[p]!
          if (k >= start && given[k] !== texts[k + offset]) {
            at.push(k)
            from.push(k + offset)
          }
        }
      } else p = listRun(start, i, offset, texts, templates, given, changed, dynamic, p, at, from)
    }
    if (i === count) break
    if (removed.length + inserted >= MAX_ENTRY_EDITS) return undefined
    // Is the new entry a few old slots on (the ones between were removed)? Otherwise it is an insertion.
    const entry = after[i]
    let d = 0
    while (d < LOOKAHEAD && j + d < length && before[j + d] !== entry) d++
    if (d < LOOKAHEAD && j + d < length) {
      if (removed.length + inserted + d > MAX_ENTRY_EDITS) return undefined
      for (let k = 0; k < d; k++) removed.push(j + k)
      j += d
      continue
    }
    at.push(i)
    from.push(-1)
    inserted++
    i++
  }
  if (removed.length + inserted + (length - j) > MAX_ENTRY_EDITS) return undefined
  for (; j < length; j++) removed.push(j)
  if (removed.length > 0 && inserted > 0 && sharesName(before, removed, after, at, from)) return undefined
  return { removed, at, from }
}

/**
 * Lists the slots of the kept run `start..end` (new positions; old ones are
 * `offset` on) whose text changed or whose template references a `changed`
 * variable, one slot at a time; returns the next unvisited `dynamic` index.
 */
function listRun(
  start: number,
  end: number,
  offset: number,
  texts: readonly string[],
  templates: readonly (Template | undefined)[],
  given: readonly string[],
  changed: ReadonlySet<string> | null,
  dynamic: readonly number[] | undefined,
  p: number,
  at: number[],
  from: number[],
): number {
  if (dynamic !== undefined) while (p < dynamic.length && dynamic[p]! < start) p++
  for (let k = start; k < end; k++) {
    let listed: boolean
    if (dynamic === undefined) listed = given[k] !== texts[k + offset]
    else if (dynamic[p] === k) {
      listed = given[k] !== texts[k + offset]
      p++
    } else listed = false
    if (!listed && changed !== null) {
      const template = templates[k + offset]
      listed = template !== undefined && touches(template, changed)
    }
    if (listed) {
      at.push(k)
      from.push(k + offset)
    }
  }
  return p
}

/** Whether a removed entry and an inserted one have the same name. */
function sharesName(before: readonly unknown[], removed: readonly number[], after: readonly { readonly name: string }[], at: readonly number[], from: readonly number[]): boolean {
  for (let k = 0; k < at.length; k++) {
    if (from[k] !== -1) continue
    const name = after[at[k]!]!.name
    for (const j of removed) if ((before[j] as { readonly name: string }).name === name) return true
  }
  return false
}

/**
 * A copy of `slots` (one of a memo's position arrays) with `edits` applied:
 * the removed positions dropped and `values[k]` at position `at[k]`, inserted
 * where `from[k]` is -1 and written over the kept slot otherwise. The kept
 * runs move in bulk (one copy, then a native shift per removal and
 * insertion), so a churn step costs a few memory moves instead of a visit
 * of every slot. A longer result is copied once more, to its exact length.
 */
export function withEdits<T>(slots: readonly T[], edits: EntryEdits, values: readonly T[]): T[] {
  const { removed, at, from } = edits
  const next = slots.slice()
  for (let k = removed.length - 1; k >= 0; k--) next.splice(removed[k]!, 1)
  for (let k = 0; k < at.length; k++) {
    if (from[k] === -1) next.splice(at[k]!, 0, values[k]!)
    else next[at[k]!] = values[k]!
  }
  // An insertion past the copy's length grew it by half again as spare room (per scope): keep arrays exact.
  return next.length > slots.length ? next.slice() : next
}

/**
 * The templates and outputs of the positions `edits` lists, rendered from
 * the `items` (registrations: their templates and fills are shared) and
 * their `given` texts; a kept entry whose text is the one in `texts` keeps
 * its template from `templates`, re-filled. Throws like a render, before
 * anything is committed.
 */
export function renderListed(
  edits: EntryEdits,
  items: readonly RenderKey[],
  given: readonly string[],
  texts: readonly string[],
  templates: readonly (Template | undefined)[],
  variables: Variables,
  kind: RenderOwner,
): { templates: (Template | undefined)[]; outputs: string[] } {
  const { at, from } = edits
  const rendered: (Template | undefined)[] = []
  const outputs: string[] = []
  for (let k = 0; k < at.length; k++) {
    const item = items[at[k]!]!
    const j = from[k]!
    const { name } = item
    const text = given[at[k]!]!
    const template = j >= 0 && texts[j] === text ? templates[j] : templateOf(item, name, text, item.interpolate !== false, kind)
    rendered.push(template)
    outputs.push(template === undefined ? text : filledFor(item, template, variables, () => ownerOf(kind, name)))
  }
  return { templates: rendered, outputs }
}
