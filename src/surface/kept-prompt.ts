/**
 * The budgeted prompt from the parts the budget keeps: rebuilt with
 * `buildRenderedPrompt`, or the previous budgeted prompt itself when
 * rebuilding would give exactly it, so an unchanged step hands back the same object.
 */

import { buildRenderedPrompt, type PartInput, type RenderedPart, type RenderedPrompt, type RenderedVariable } from '../render/rendered-prompt.js'

/**
 * Every `PartInput` field `sameParts` compares (offsets follow from the texts).
 * test/surface/budget.test.ts checks it against the builder's input, so a new field cannot be skipped (a stale reuse).
 */
export const COMPARED_PART_FIELDS = Object.freeze([
  'name', 'text', 'layer', 'origin', 'stability', 'variables',
  'cacheBreakpoint', 'required', 'complete', 'priority', 'substitutions',
] as const satisfies readonly (keyof PartInput)[])

/**
 * The prompt of `kept` (a subsequence of the step's parts, in order) with the
 * step's `variables` (the builder keeps those the kept parts reference):
 * `previous` when its parts and variables equal those, else a new frozen prompt.
 */
export function keptPrompt(kept: readonly RenderedPart[], variables: readonly RenderedVariable[], previous: RenderedPrompt | undefined): RenderedPrompt {
  if (previous !== undefined && sameParts(kept, previous.parts)) {
    const referenced = new Set(kept.flatMap((part) => part.variables))
    if (sameVariables(variables.filter((variable) => referenced.has(variable.name)), previous.variables)) return previous
  }
  return buildRenderedPrompt(
    kept.map(({ start: _start, end: _end, ...input }) => input),
    variables,
  )
}

/** Whether two variable lists name the same variables with the same layer and stability, in order. */
export function sameVariables(a: readonly RenderedVariable[], b: readonly RenderedVariable[]): boolean {
  return a === b || (a.length === b.length && a.every((x, i) => x.name === b[i]!.name && x.layer === b[i]!.layer && x.stability === b[i]!.stability))
}

/** Whether `a` and `b` hold equal parts in the same order (every compared field; offsets follow). */
export function sameParts(a: readonly RenderedPart[], b: readonly RenderedPart[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i] || COMPARED_PART_FIELDS.every((field) => sameValue(x[field], b[i]![field])))
}

/** Strict equality, element by element for arrays, and field by field for the plain records inside them (substitutions). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameValue(item, b[i]))
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => (a as Record<string, unknown>)[key] === (b as Record<string, unknown>)[key])
}
