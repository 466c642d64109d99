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

/** The source of section `i` in the assembly `record` describes (none for a copy), and the part input of its fill. */
function inputOf(record: AssemblyRecord | undefined, i: number, fill: Fill): { source: SectionSource | undefined; input: PartInput } {
  const provenance = record?.provenance
  const table = provenance?.sections
  const index = table === undefined ? undefined : sourceIndex(table, fill.name, i)
  const source = index === undefined ? undefined : table!.list[index]
  const input: PartInput = {
    name: fill.name,
    text: fill.output,
    layer: source?.layer,
    origin: source !== undefined && provenance!.collected?.[index!] === fill.text ? 'registry' : 'waterfall',
    stability: source?.stability ?? 'session',
    variables: namesOf(fill.template),
    cacheBreakpoint: source?.cacheBreakpoint ?? false,
    required: source?.required ?? false,
    restored: table !== undefined && (provenance!.restored?.includes(fill.name) ?? false),
    complete: source?.complete ?? false,
    priority: source?.priority ?? 0,
    substitutions: fill.substitutions,
  }
  return { source, input }
}

function samePart(part: RenderedPart, input: PartInput, start: number): boolean {
  if (part.start !== start) return false
  for (const key in input) if (part[key as keyof PartInput] !== input[key as keyof PartInput]) return false
  return true
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
    const { source, input } = inputOf(record, i, fill)
    const old = previous?.fills[k] === fill ? previous.parts[k] : undefined
    const shared = source === undefined ? undefined : sharedParts.get(source)
    if (old !== undefined && samePart(old, input, start)) inputs.push(old)
    else if (shared !== undefined && samePart(shared, input, start)) inputs.push(shared)
    else inputs.push(input)
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
