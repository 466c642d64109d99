import { sourceIndex, sourceNamed, type AssemblyRecord, type SectionSource } from '../assembly/provenance.js'
import type { Fill } from './render-memo.js'
import { PART_SEPARATOR, type RenderedPart, type RenderedVariable } from './rendered-prompt.js'

/** The last part made for each registration (one source object per registration, shared by every scope). */
const sharedParts = new WeakMap<SectionSource, RenderedPart>()

// Compared field by field, with no label object: this runs for every part of every changed render. Substitutions
// (by identity) before text: comparing two scopes' equal-length outputs by content flattens both ropes into copies.
function samePart(
  part: RenderedPart | undefined,
  fill: Fill,
  start: number,
  source: SectionSource | undefined,
  origin: RenderedPart['origin'],
  restored: boolean,
): part is RenderedPart {
  return (
    part !== undefined &&
    part.start === start &&
    part.name === fill.name &&
    part.substitutions === fill.substitutions &&
    part.text === fill.output &&
    part.variables === fill.names &&
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

/**
 * The placed, frozen parts of the non-empty `fills`, labelled from `record` (none: a copy, rendered without layers). A
 * part equal to `previous`'s at its position, or to the last one made for its registration in any scope, is that object.
 */
export function partsOf(fills: readonly Fill[], record: AssemblyRecord | undefined, previous?: readonly RenderedPart[]): RenderedPart[] {
  const provenance = record?.provenance
  const table = provenance?.sections
  const parts = new Array<RenderedPart>(fills.length)
  let n = 0
  let start = 0
  for (let i = 0; i < fills.length; i++) {
    const fill = fills[i]!
    if (fill.output === '') continue
    if (n > 0) start += PART_SEPARATOR.length
    const index = table === undefined ? undefined : sourceIndex(table, fill.name, i)
    const source = index === undefined ? undefined : table!.list[index]
    const origin = source !== undefined && provenance!.collected?.[index!] === fill.text ? 'registry' : 'waterfall'
    const restored = provenance?.restored?.includes(fill.name) ?? false
    let part = previous?.[n]
    if (!samePart(part, fill, start, source, origin, restored)) {
      part = source === undefined ? undefined : sharedParts.get(source)
      if (!samePart(part, fill, start, source, origin, restored)) {
        part = Object.freeze({
          name: fill.name,
          text: fill.output,
          start,
          end: start + fill.output.length,
          layer: source?.layer,
          origin,
          stability: source?.stability ?? 'session',
          variables: fill.names,
          cacheBreakpoint: source?.cacheBreakpoint ?? false,
          required: source?.required ?? false,
          restored,
          complete: source?.complete ?? false,
          priority: source?.priority ?? 0,
          substitutions: fill.substitutions,
        })
        if (source !== undefined) sharedParts.set(source, part)
      }
    }
    parts[n++] = part
    start = part.end
  }
  parts.length = n
  return parts
}

/** The variables `parts` reference, in first-use order, with their supplying layer and declared stability. */
export function variablesOf(parts: readonly RenderedPart[], record: AssemblyRecord | undefined): RenderedVariable[] {
  const table = record?.provenance.variables
  const seen = new Set<string>()
  const out: RenderedVariable[] = []
  for (let i = 0; i < parts.length; i++) {
    const names = parts[i]!.variables
    for (let j = 0; j < names.length; j++) {
      const name = names[j]!
      if (seen.has(name)) continue
      seen.add(name)
      const source = table === undefined ? undefined : sourceNamed(table, name)
      out.push(Object.freeze({ name, layer: source?.layer, stability: source?.stability ?? 'session' }))
    }
  }
  return out
}
