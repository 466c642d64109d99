/**
 * The budgeted prompt from the parts the budget keeps: rebuilt with
 * `buildRenderedPrompt` (so offsets and blocks are right), or the previous
 * budgeted prompt itself when rebuilding would give exactly it, so an
 * unchanged step hands the surface the same object again.
 */

import { buildRenderedPrompt, type PartInput, type RenderedPart, type RenderedPrompt } from '../render/rendered-prompt.js'

/**
 * Every `PartInput` field `samePart` compares (offsets follow from the
 * texts). test/budget.test.ts checks this list against the builder's input
 * type, so a new field cannot be skipped silently (a stale reuse).
 */
export const COMPARED_PART_FIELDS = Object.freeze([
  'name',
  'text',
  'layer',
  'origin',
  'stability',
  'variables',
  'cacheBreakpoint',
  'required',
  'complete',
  'priority',
  'substitutions',
] as const satisfies readonly (keyof PartInput)[])

/**
 * The prompt of `kept` (a subsequence of the step's parts, in order):
 * `previous` when its parts equal `kept` field by field, else a new frozen
 * prompt built from them.
 */
export function keptPrompt(kept: readonly RenderedPart[], previous: RenderedPrompt | undefined): RenderedPrompt {
  if (previous !== undefined && sameParts(kept, previous.parts)) return previous
  return buildRenderedPrompt(kept.map(inputOf))
}

function inputOf(part: RenderedPart): PartInput {
  const { start: _start, end: _end, ...input } = part
  return input
}

/** Whether `a` and `b` hold equal parts in the same order (every compared field; offsets follow). */
export function sameParts(a: readonly RenderedPart[], b: readonly RenderedPart[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!samePart(a[i]!, b[i]!)) return false
  return true
}

/** Field by field over `COMPARED_PART_FIELDS`, written out because this runs for every kept part on every step. */
function samePart(a: PartInput, b: PartInput): boolean {
  return (
    a === b ||
    (a.text === b.text &&
      a.name === b.name &&
      a.layer === b.layer &&
      a.origin === b.origin &&
      a.stability === b.stability &&
      a.cacheBreakpoint === b.cacheBreakpoint &&
      a.required === b.required &&
      a.complete === b.complete &&
      a.priority === b.priority &&
      (a.variables === b.variables ||
        (a.variables.length === b.variables.length && a.variables.every((name, i) => name === b.variables[i]))) &&
      (a.substitutions === b.substitutions ||
        (a.substitutions.length === b.substitutions.length &&
          a.substitutions.every((s, i) => {
            const t = b.substitutions[i]!
            return s.variable === t.variable && s.start === t.start && s.end === t.end
          }))))
  )
}
