import type { ToolSchema } from '../assembly/types.js'
import { headerStateOf, toolDiff, type ToolDiff } from '../surface/request-header.js'
import type { ReplayedStep } from '../surface/session-log-replay.js'

/**
 * What the report reads from one replayed step: its prompt cut into parts, and
 * what changed against the previous step of its session (sections, tools, config).
 */

/** One sent part of a replayed step. */
export interface StepPart {
  readonly name: string
  readonly text: string
  /** `'global'`, the supplying scope's label, or `undefined` when the log does not say. */
  readonly layer: string | undefined
  /** Its token count by the budget's rule, when the log has it. */
  readonly tokens: number | undefined
}

const SEPARATOR = '\n\n'

/**
 * The parts of `step.prompt` from its `sections` and `sectionLengths`, or
 * `undefined` when the log cannot say: no lengths, lists of different lengths, or
 * lengths that do not add up to the prompt (an in-history step whose prompt was
 * empty keeps the previous text).
 */
export function stepParts(step: Pick<ReplayedStep, 'prompt' | 'sections' | 'sectionLengths' | 'sectionLayers' | 'sectionTokens'>): StepPart[] | undefined {
  const { prompt, sections, sectionLengths: lengths } = step
  if (sections === undefined || lengths === undefined || lengths.length !== sections.length) return undefined
  const layers = step.sectionLayers?.length === sections.length ? step.sectionLayers : undefined
  const tokens = step.sectionTokens?.length === sections.length ? step.sectionTokens : undefined
  const parts: StepPart[] = []
  let at = 0
  for (let i = 0; i < sections.length; i++) {
    if (i > 0) {
      if (!prompt.startsWith(SEPARATOR, at)) return undefined
      at += SEPARATOR.length
    }
    const end = at + lengths[i]!
    if (end > prompt.length) return undefined
    parts.push({ name: sections[i]!, text: prompt.slice(at, end), layer: layers?.[i] ?? undefined, tokens: tokens?.[i] })
    at = end
  }
  return at === prompt.length ? parts : undefined
}

/**
 * How a step's sections changed against the previous step. `withheld`: sent by the
 * previous step but withheld by the budget now (on the first step: every withheld
 * one); `restored`: sent again after the budget withheld them; `classified` is
 * `false` when a step record lacks `sections`, so additions and removals count as changed.
 */
export interface SectionChanges {
  readonly changed: readonly string[]
  readonly added: readonly string[]
  readonly removed: readonly string[]
  readonly withheld: readonly string[]
  readonly restored: readonly string[]
  readonly classified: boolean
}

/** How the tool declarations changed (from the two steps' `request/header` tool lists). */
export type ToolChanges = ToolDiff

/**
 * Splits `changedSections` into changed, added and removed using the two steps'
 * `sections` lists (without both, everything stays "changed"); sections the
 * budget newly withheld or restored are reported as such, not as removed or added.
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
