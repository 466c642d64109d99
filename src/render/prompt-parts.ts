/**
 * The parts of a memoized render, rebuilt against the previous prompt of the
 * same scope: a part whose output, registration options, template (its
 * shared `variables` array) and substituted values are what they were keeps
 * its frozen object while its offset is unchanged (everything before a
 * change), and otherwise shares its arrays with the old one at its new
 * offset. Only a new or changed output builds fresh substitutions. Nothing
 * is kept beside the parts themselves.
 *
 *     previous   [a][b][c ][d][e]       c changes:
 *     next       [a][b][c'  ][d][e]     a, b reused; d, e moved (arrays shared)
 */

import { sourceNamed, type AssemblyRecord, type SectionSource, type SourceTable } from '../assembly/provenance.js'
import type { Template } from '../assembly/template.js'
import type { Stability } from '../assembly/types.js'
import type { BlockItems } from './prompt-blocks.js'
import { touches } from './shared-templates.js'
import { PART_SEPARATOR, placePart, SHARED_VARIABLES, type RenderedPart, type RenderedSubstitution, type RenderedVariable } from './rendered-prompt.js'

type Variables = Readonly<Record<string, string | undefined>>

const NO_VALUES: readonly string[] = Object.freeze([])
const NO_SUBSTITUTIONS: readonly RenderedSubstitution[] = Object.freeze([])
/** A template's distinct reference names, shared by every part filled from it. */
const namesByTemplate = new WeakMap<Template, readonly string[]>()

function namesOf(template: Template | undefined): readonly string[] {
  if (template === undefined) return NO_VALUES
  let names = namesByTemplate.get(template)
  if (names === undefined) namesByTemplate.set(template, (names = Object.freeze([...new Set(template.refs)])))
  return names
}

/** Where each reference's substituted value lies in the output of `template`, from the values themselves. */
function substitutionsOf(template: Template | undefined, variables: Variables): readonly RenderedSubstitution[] {
  if (template === undefined) return NO_SUBSTITUTIONS
  const { parts, refs } = template
  // Exactly as long as needed: a pushed-to array keeps room for 16.
  const out = new Array<RenderedSubstitution>(refs.length)
  let offset = parts[0]!.length
  for (let i = 0; i < refs.length; i++) {
    // The output was filled from these values, so each one is defined here.
    const end = offset + variables[refs[i]!]!.length
    out[i] = Object.freeze({ variable: refs[i]!, start: offset, end })
    offset = end + parts[i + 1]!.length
  }
  return Object.freeze(out)
}

/**
 * Whether `part` (of the same output text and template) holds exactly the
 * current values at its substitutions. Comparing lengths is enough: the text
 * is the template's literals with the values between them, so with the same
 * literals, the same text and values of the same lengths at the same places,
 * each value is the text between its literals, in both. (No character is
 * read: a filled output may be a rope, which a read would flatten.)
 */
function sameValues(part: RenderedPart, template: Template, variables: Variables): boolean {
  const { substitutions } = part
  const { refs } = template
  for (let i = 0; i < substitutions.length; i++) {
    const { start, end } = substitutions[i]!
    const value = variables[refs[i]!]
    if (value === undefined || value.length !== end - start) return false
  }
  return true
}

/**
 * Parts interned per registration (its `SectionSource`, shared by every
 * view) and offset: agents whose earlier parts have the same lengths hold
 * the same frozen part for a shared section instead of one each. A few
 * offsets per registration; entries go with the registration.
 */
const internedParts = new WeakMap<SectionSource, Map<number, Interned>>()
const INTERNED_OFFSETS = 4

/** An interned part, with the values its template was filled from (none without a template). */
interface Interned {
  readonly part: RenderedPart
  readonly values: readonly (string | undefined)[]
}

function valuesFor(template: Template | undefined, variables: Variables): readonly (string | undefined)[] {
  if (template === undefined) return NO_VALUES
  const { refs } = template
  const values = new Array<string | undefined>(refs.length)
  for (let i = 0; i < refs.length; i++) values[i] = variables[refs[i]!]
  return values
}

/**
 * The interned part of `source` at `start`, when it has exactly this text,
 * origin, flag, names and values. A templated part is matched by its values
 * (the same template filled with the same values is the same text), so
 * another agent's fill of the same length is never compared character by
 * character (which would flatten both ropes).
 */
function internedPart(source: SectionSource, start: number, text: string, origin: RenderedPart['origin'], restored: boolean, names: readonly string[], template: Template | undefined, variables: Variables): RenderedPart | undefined {
  const held = internedParts.get(source)?.get(start)
  if (held === undefined) return undefined
  const { part, values } = held
  if (part.origin !== origin || part.restored !== restored || part.variables !== names || part.text.length !== text.length) return undefined
  if (template === undefined) return part.text === text ? part : undefined
  const { refs } = template
  for (let i = 0; i < refs.length; i++) if (values[i] !== variables[refs[i]!]) return undefined
  return part
}

function intern(source: SectionSource, part: RenderedPart, template: Template | undefined, variables: Variables): void {
  let byStart = internedParts.get(source)
  if (byStart === undefined) internedParts.set(source, (byStart = new Map()))
  if (byStart.size >= INTERNED_OFFSETS) byStart.delete(byStart.keys().next().value!)
  byStart.set(part.start, { part, values: valuesFor(template, variables) })
}

/** Whether `part` came from a section with these options (layer, stability, flags, priority) and origin. */
function sameSource(part: RenderedPart, source: SectionSource | undefined, origin: RenderedPart['origin']): boolean {
  return (
    part.origin === origin &&
    part.layer === source?.layer &&
    part.stability === (source?.stability ?? 'session') &&
    part.cacheBreakpoint === (source?.cacheBreakpoint ?? false) &&
    part.required === (source?.required ?? false) &&
    part.complete === (source?.complete ?? false) &&
    part.priority === (source?.priority ?? 0)
  )
}

/** Where `name` is in `before`, looked for a few parts around `near` (a changed step shifts later parts by one or two); -1: not there. */
function nearby(before: readonly RenderedPart[], name: string, near: number): number {
  for (let j = Math.max(0, near - 2), end = Math.min(before.length, near + 4); j < end; j++) if (before[j]!.name === name) return j
  return -1
}

/**
 * Finds the section source of each rendered item, in item order: at the
 * item's position plus the current shift (identity and persona come first
 * and are in no list; a listener's section shifts the rest), else by name,
 * which moves the shift.
 */
class SourceFinder {
  readonly #sources: SourceTable<SectionSource> | undefined
  #shift = 0

  constructor(sources: SourceTable<SectionSource> | undefined) {
    this.#sources = sources
  }

  /** The index in the source list of item `i`, named `name`; `undefined` when no source has that name. */
  indexOf(i: number, name: string): number | undefined {
    const sources = this.#sources
    if (sources === undefined) return undefined
    if (sources.list[i + this.#shift]?.name === name) return i + this.#shift
    const index = sources.indexOf.get(name)
    if (index !== undefined) this.#shift = index - i
    return index
  }
}

/**
 * The parts of a render of the items named `names` (texts in `texts`, outputs and templates
 * from the memo), reusing `previous` where nothing a part depends on moved.
 * A section keeps `origin: 'registry'` while its name and text are the ones
 * the registry collected; a listener's own or edited section is `'waterfall'`.
 *
 * `changed` is what the memo knows about the values since `previous` was
 * built: the variables that changed (`null`: none), so a part whose template
 * references none of them keeps its substitutions without reading them
 * again; `undefined` when `previous` is older than that, and every
 * substituted value is compared. The first `kept` items are known to be
 * what they were when `previous` was built (same slots, sources, origins and
 * marks): their parts are `previous`'s, taken without a check.
 */
export function buildParts(
  names: readonly string[],
  texts: readonly string[],
  outputs: readonly string[],
  templates: readonly (Template | undefined)[],
  variables: Variables,
  record: AssemblyRecord | undefined,
  previous: readonly RenderedPart[] | undefined,
  changed?: ReadonlySet<string> | null,
  kept = 0,
): RenderedPart[] {
  const sources = record?.provenance.sections
  const collected = record?.provenance.collected
  const restoredNames = record?.provenance.restored
  let cursorAfterKept = 0
  let first = 0
  for (; first < kept; first++) if (outputs[first] !== '') cursorAfterKept++
  let parts: RenderedPart[] = []
  if (previous !== undefined && cursorAfterKept <= previous.length) {
    // A spread and a cut: `slice` of a frozen array takes V8's slow path (~19 µs for 200 parts against 0.3).
    parts = [...previous]
    parts.length = cursorAfterKept
  } else first = 0
  const before = previous
  let byName: Map<string, number> | undefined
  // Names the window around the cursor missed: past two (a reorder, not an insertion), look everything up by name.
  let misses = 0
  const finder = new SourceFinder(sources)
  let cursor = parts.length
  let offset = parts.length === 0 ? 0 : parts[parts.length - 1]!.end
  for (let i = first; i < names.length; i++) {
    const text = outputs[i]!
    if (text === '') continue
    const name = names[i]!
    const index = finder.indexOf(i, name)
    const source = index === undefined ? undefined : sources!.list[index]
    const origin = source !== undefined && collected?.[index!] === texts[i] ? 'registry' : 'waterfall'
    const restored = restoredNames !== undefined && restoredNames.length > 0 && restoredNames.includes(name)
    const template = templates[i]
    const refNames = namesOf(template)
    const start = parts.length === 0 ? 0 : offset + PART_SEPARATOR.length
    let part: RenderedPart | undefined
    let moved: RenderedPart | undefined
    if (before !== undefined) {
      let at = cursor < before.length && before[cursor]!.name === name ? cursor : byName === undefined ? nearby(before, name, cursor) : -1
      if (at < 0 && (byName !== undefined || ++misses > 2)) {
        if (byName === undefined) {
          byName = new Map()
          for (let j = 0; j < before.length; j++) byName.set(before[j]!.name, j)
        }
        at = byName.get(name) ?? -1
      }
      if (at >= 0) {
        cursor = at + 1
        const old = before[at]!
        if (
          old.text === text &&
          old.variables === refNames &&
          sameSource(old, source, origin) &&
          old.restored === restored &&
          (template === undefined || changed === null || (changed !== undefined && !touches(template, changed)) || sameValues(old, template, variables))
        ) {
          if (old.start === start) part = old
          else moved = old
        }
      }
    }
    // A moved part is re-placed directly (a changed step moves every later part: no table look-ups for them).
    if (part === undefined && moved !== undefined) part = placePart(moved, start)
    if (part === undefined && source !== undefined) part = internedPart(source, start, text, origin, restored, refNames, template, variables)
    if (part === undefined) {
      part = placePart(
        {
          name,
          text,
          layer: source?.layer,
          origin,
          stability: source?.stability ?? 'session',
          variables: refNames,
          cacheBreakpoint: source?.cacheBreakpoint ?? false,
          required: source?.required ?? false,
          restored,
          complete: source?.complete ?? false,
          priority: source?.priority ?? 0,
          substitutions: substitutionsOf(template, variables),
        },
        start,
      )
      // A view's first render interns; later ones only look up (no churn of the table on every move).
      if (source !== undefined && before === undefined) intern(source, part, template, variables)
    }
    parts.push(part)
    offset = part.end
  }
  return parts
}

/**
 * The block items of the parts `buildParts` would make from the same memo
 * arrays and record (non-empty outputs, their names, and the stability and
 * `cacheBreakpoint` flag of the section each came from), without making a
 * part: what `blocks` needs.
 */
export function blockItemsOf(names: readonly string[], outputs: readonly string[], record: AssemblyRecord | undefined): BlockItems {
  const sources = record?.provenance.sections
  const items = { names: [] as string[], texts: [] as string[], stabilities: [] as Stability[], breakpoints: [] as boolean[] }
  const finder = new SourceFinder(sources)
  for (let i = 0; i < names.length; i++) {
    const text = outputs[i]!
    if (text === '') continue
    const name = names[i]!
    const index = finder.indexOf(i, name)
    const source = index === undefined ? undefined : sources!.list[index]
    items.names.push(name)
    items.texts.push(text)
    items.stabilities.push(source?.stability ?? 'session')
    items.breakpoints.push(source?.cacheBreakpoint ?? false)
  }
  return items
}

/** One frozen `RenderedVariable` per variable registration, shared by every prompt that references it. */
const renderedVariables = new WeakMap<object, RenderedVariable>()

function variableOf(source: { readonly name: string; readonly layer: RenderedVariable['layer']; readonly stability?: RenderedVariable['stability'] }): RenderedVariable {
  let variable = renderedVariables.get(source)
  if (variable === undefined) {
    variable = Object.freeze({ name: source.name, layer: source.layer, stability: source.stability ?? 'session' })
    renderedVariables.set(source, variable)
    SHARED_VARIABLES.add(variable)
  }
  return variable
}

/** The variables `parts` reference, in first-use order, with their supplying layer and declared stability; each one frozen. */
export function variablesOf(parts: readonly RenderedPart[], record: AssemblyRecord | undefined): RenderedVariable[] {
  const table = record?.provenance.variables
  const seen = new Set<string>()
  const out: RenderedVariable[] = []
  for (const part of parts) {
    for (const name of part.variables) {
      if (seen.has(name)) continue
      seen.add(name)
      const source = table === undefined ? undefined : sourceNamed(table, name)
      out.push(source === undefined ? Object.freeze({ name, layer: undefined, stability: 'session' as const }) : variableOf(source))
    }
  }
  return out
}
