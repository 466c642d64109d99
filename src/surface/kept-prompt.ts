/**
 * The budgeted prompt from the parts the budget keeps: rebuilt with
 * `buildRenderedPrompt` (so offsets and blocks are right), or the previous
 * budgeted prompt itself when rebuilding would give exactly it, so an
 * unchanged step hands the surface the same object again.
 */

import { buildRenderedPrompt, type PartInput, type RenderedPart, type RenderedPrompt, type RenderedVariable } from '../render/rendered-prompt.js'

/**
 * Every `PartInput` field `samePart` compares (offsets follow from the
 * texts). test/surface/budget.test.ts checks this list against the builder's
 * input type, so a new field cannot be skipped silently (a stale reuse).
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
 * The prompt of `kept` (a subsequence of the step's parts, in order) with the
 * step's `variables` (the builder keeps those the kept parts reference, so the
 * stability lint still sees a kept part's volatile variable): `previous` when
 * its parts equal `kept` field by field and its variables are the ones kept,
 * else a new frozen prompt built from them.
 */
export function keptPrompt(
  kept: readonly RenderedPart[],
  variables: readonly RenderedVariable[],
  previous: RenderedPrompt | undefined,
): RenderedPrompt {
  if (previous !== undefined && sameParts(kept, previous.parts) && sameVariables(referencedBy(kept, variables), previous.variables)) return previous
  return buildRenderedPrompt(kept.map(inputOf), variables)
}

/** `variables` that some part of `parts` references, in their order (what the builder keeps). */
function referencedBy(parts: readonly RenderedPart[], variables: readonly RenderedVariable[]): readonly RenderedVariable[] {
  if (variables.length === 0) return variables
  const referenced = new Set<string>()
  for (const part of parts) for (const name of part.variables) referenced.add(name)
  return variables.filter((variable) => referenced.has(variable.name))
}

/** Whether two variable lists name the same variables with the same layer and stability, in order. */
export function sameVariables(a: readonly RenderedVariable[], b: readonly RenderedVariable[]): boolean {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (x.name !== y.name || x.layer !== y.layer || x.stability !== y.stability) return false
  }
  return true
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

function samePart(a: PartInput, b: PartInput): boolean {
  return a === b || COMPARED_PART_FIELDS.every((field) => sameValue(a[field], b[field]))
}

/** Strict equality, element by element for arrays, and field by field for the plain records inside them (substitutions). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameValue(item, b[i]))
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => (a as Record<string, unknown>)[key] === (b as Record<string, unknown>)[key])
}
