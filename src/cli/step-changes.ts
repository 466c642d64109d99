/**
 * What changed at one replayed step against the previous step of its
 * session: its sections (classified as changed, added, removed, or moved by
 * the budget), its tool declarations and its config keys.
 */

import type { ToolSchema } from '../assembly/types.js'
import { headerStateOf, toolDiff, type ToolDiff } from '../surface/request-header.js'
import type { ReplayedStep } from '../surface/session-log-replay.js'

/** How a step's sections changed against the previous step. */
export interface SectionChanges {
  /** Sections whose output changed (present in both steps, or unknown when the log has no section lists). */
  readonly changed: readonly string[]
  /** Sections rendered now but not in the previous step. */
  readonly added: readonly string[]
  /** Sections rendered in the previous step but not now (withheld ones excluded). */
  readonly removed: readonly string[]
  /**
   * Sections the token budget withheld from this step's prompt that the
   * previous step sent (on the first step: every withheld one). A withheld
   * section is a reason the prompt changed, like a removal, but it is still
   * registered.
   */
  readonly withheld: readonly string[]
  /** Sections sent again this step after the budget had withheld them. */
  readonly restored: readonly string[]
  /** `false` when a step record lacks `sections`, so additions and removals count as changed. */
  readonly classified: boolean
}

/** How the tool declarations changed (from the two steps' `request/header` tool lists). */
export type ToolChanges = ToolDiff

/**
 * Splits `changedSections` into changed, added and removed using the two
 * steps' `sections` lists; a section that appears or disappears counts even
 * when the writer did not list it as changed. Without both lists everything
 * stays "changed". Sections the budget newly withheld or restored (from the
 * steps' `withheld` lists) are reported as such, not as removed or added.
 */
export function sectionChanges(
  step: Pick<ReplayedStep, 'changedSections' | 'sections' | 'withheld'>,
  previous: Pick<ReplayedStep, 'sections' | 'withheld'> | undefined,
): SectionChanges {
  const held = step.withheld ?? []
  if (previous === undefined) return { changed: [], added: step.sections ?? [], removed: [], withheld: held, restored: [], classified: step.sections !== undefined }
  const heldBefore = previous.withheld ?? []
  const withheld = held.filter((name) => !heldBefore.includes(name))
  // A name that left the withheld set but is not sent now left the registry: nothing changed in the prompt.
  const restored = heldBefore.filter((name) => !held.includes(name) && (step.sections === undefined || step.sections.includes(name)))
  const budgeted = (name: string): boolean => withheld.includes(name) || restored.includes(name)
  if (step.sections === undefined || previous.sections === undefined) {
    return { changed: step.changedSections.filter((name) => !budgeted(name)), added: [], removed: [], withheld, restored, classified: false }
  }
  const now = new Set(step.sections)
  const before = new Set(previous.sections)
  const added = step.sections.filter((name) => !before.has(name) && !budgeted(name))
  const removed = previous.sections.filter((name) => !now.has(name) && !budgeted(name))
  const changed = step.changedSections.filter((name) => now.has(name) && before.has(name))
  return { changed, added, removed, withheld, restored, classified: true }
}

/** The tool changes between two steps' declarations (the step surface's own comparison); `undefined` when identical. */
export function toolChanges(before: readonly ToolSchema[], after: readonly ToolSchema[]): ToolChanges | undefined {
  const diff = toolDiff(headerStateOf(before, '', undefined), headerStateOf(after, '', undefined))
  return diff.added.length + diff.removed.length + diff.changed.length === 0 && !diff.reordered ? undefined : diff
}

/** The config keys whose JSON value differs (added, removed or changed), in first-seen order. */
export function configChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
}
