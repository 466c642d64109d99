/**
 * The parts of a render, one per non-empty fill, labelled from the assembly's
 * provenance. A part equal to the previous prompt's at its position, or to the
 * last one made for its registration in any scope, is that same frozen object.
 */

import { sourceIndex, sourceNamed, type AssemblyRecord, type SectionSource } from '../assembly/provenance.js'
import type { Template } from '../assembly/template.js'
import type { Fill } from './render-memo.js'
import { PART_SEPARATOR, type PartInput, type RenderedPart, type RenderedVariable } from './rendered-prompt.js'

const NONE: readonly never[] = Object.freeze([])
/** A template's distinct reference names in first-use order, shared by every part filled from it. */
const namesByTemplate = new WeakMap<Template, readonly string[]>()

function namesOf(template: Template | undefined): readonly string[] {
  if (template === undefined) return NONE
  let names = namesByTemplate.get(template)
  if (names === undefined) namesByTemplate.set(template, (names = Object.freeze([...new Set(template.refs)])))
  return names
}

/** The last part made for each registration (one source object per registration, shared by every scope). */
const sharedParts = new WeakMap<SectionSource, RenderedPart>()

/** Whether `part` is what section `fill`, labelled `label`, at `start` would be. */
function samePart(part: RenderedPart, fill: Fill, label: Label, start: number): boolean {
  return (
    part.start === start &&
    part.name === fill.name &&
    part.text === fill.output &&
    part.substitutions === fill.substitutions &&
    part.variables === namesOf(fill.template) &&
    sameLabel(part, label)
  )
}

/** What a part knows besides its fill: where it came from. */
interface Label {
  readonly source: SectionSource | undefined
  readonly origin: RenderedPart['origin']
  readonly restored: boolean
}

/** The label of section `i` (its fill `fill`) in the assembly `record` describes; no record (a copy): no layers. */
function labelOf(record: AssemblyRecord | undefined, i: number, fill: Fill): Label {
  const provenance = record?.provenance
  const table = provenance?.sections
  if (table === undefined) return { source: undefined, origin: 'waterfall', restored: false }
  const index = sourceIndex(table, fill.name, i)
  const source = index === undefined ? undefined : table.list[index]
  const origin = source !== undefined && provenance!.collected?.[index!] === fill.text ? 'registry' : 'waterfall'
  return { source, origin, restored: provenance!.restored?.includes(fill.name) ?? false }
}

// Compared field by field, not through a fresh input object: this runs for every part of every changed render.
function sameLabel(part: RenderedPart, { source, origin, restored }: Label): boolean {
  return (
    part.origin === origin &&
    part.restored === restored &&
    part.layer === source?.layer &&
    part.stability === (source?.stability ?? 'session') &&
    part.cacheBreakpoint === (source?.cacheBreakpoint ?? false) &&
    part.required === (source?.required ?? false) &&
    part.complete === (source?.complete ?? false) &&
    part.priority === (source?.priority ?? 0)
  )
}

/** The previous render of a scope: its non-empty fills in prompt order, parallel to its prompt's parts. */
export interface PreviousParts {
  readonly fills: readonly Fill[]
  readonly parts: readonly RenderedPart[]
}

/**
 * The part inputs of the non-empty `fills`, in order, reusing `previous`'s or
 * the shared part where equal; also the non-empty fills (the next render's
 * `previous`) and each input's registration (for `shareParts`).
 */
export function partsOf(
  fills: readonly Fill[],
  record: AssemblyRecord | undefined,
  previous: PreviousParts | undefined,
): { readonly inputs: (PartInput | RenderedPart)[]; readonly fills: readonly Fill[]; readonly sources: (SectionSource | undefined)[] } {
  const inputs: (PartInput | RenderedPart)[] = []
  const kept: Fill[] = []
  const sources: (SectionSource | undefined)[] = []
  let offset = 0
  for (let i = 0; i < fills.length; i++) {
    const fill = fills[i]!
    if (fill.output === '') continue
    const k = inputs.length
    const start = k === 0 ? 0 : offset + PART_SEPARATOR.length
    const label = labelOf(record, i, fill)
    const { source, origin, restored } = label
    const old = previous?.fills[k] === fill ? previous.parts[k] : undefined
    const shared = source === undefined ? undefined : sharedParts.get(source)
    if (old !== undefined && old.start === start && sameLabel(old, label)) inputs.push(old)
    else if (shared !== undefined && samePart(shared, fill, label, start)) inputs.push(shared)
    else {
      inputs.push({
        name: fill.name,
        text: fill.output,
        layer: source?.layer,
        origin,
        stability: source?.stability ?? 'session',
        variables: namesOf(fill.template),
        cacheBreakpoint: source?.cacheBreakpoint ?? false,
        required: source?.required ?? false,
        restored,
        complete: source?.complete ?? false,
        priority: source?.priority ?? 0,
        substitutions: fill.substitutions,
      })
    }
    kept.push(fill)
    sources.push(source)
    offset = start + fill.output.length
  }
  // With no empty output, the non-empty fills are `fills` itself: one array kept, not two equal ones.
  return { inputs, fills: kept.length === fills.length ? (fills as Fill[]) : kept, sources }
}

/** Makes each of `parts` the shared part of its registration in `sources` (parallel to `parts`). */
export function shareParts(parts: readonly RenderedPart[], sources: readonly (SectionSource | undefined)[]): void {
  for (let i = 0; i < parts.length; i++) {
    const source = sources[i]
    if (source !== undefined) sharedParts.set(source, parts[i]!)
  }
}

/** The variables `inputs` reference, in first-use order, with their supplying layer and declared stability. */
export function variablesOf(inputs: readonly { readonly variables: readonly string[] }[], record: AssemblyRecord | undefined): RenderedVariable[] {
  const table = record?.provenance.variables
  const seen = new Set<string>()
  const out: RenderedVariable[] = []
  for (const input of inputs) {
    for (const name of input.variables) {
      if (seen.has(name)) continue
      seen.add(name)
      const source = table === undefined ? undefined : sourceNamed(table, name)
      out.push(Object.freeze({ name, layer: source?.layer, stability: source?.stability ?? 'session' }))
    }
  }
  return out
}
