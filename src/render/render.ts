import { entryLabel } from '../assembly/entries.js'
import { recordOf, type AssemblyRecord, type RenderSlot, type SectionSource, type SourceTable } from '../assembly/provenance.js'
import type { Template } from '../assembly/template.js'
import type { PromptPresentation } from '../assembly/types.js'
import { guardStability } from './stability-guard.js'
import { renderItem, RenderMemo, type RenderItem, type RenderOwner } from './render-memo.js'
import {
  buildRenderedPrompt,
  PART_SEPARATOR,
  type PartInput,
  type RenderedPrompt,
  type RenderedSubstitution,
  type RenderedVariable,
} from './rendered-prompt.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

/** One rendered runtime-context section. */
export interface RenderedContextSection {
  /** The runtime context's name. */
  name: string
  /** Its rendered (interpolated), non-empty text. */
  text: string
}

type Variables = Readonly<Record<string, string | undefined>>

type Renderable = Pick<PromptPresentation, 'variables'> & {
  readonly sections?: readonly RenderItem[]
  readonly contexts?: readonly RenderItem[]
}

/** What the render layer keeps per scope slot: the two render memos and the last `RenderedPrompt`. */
interface SlotCache {
  readonly sections: RenderMemo
  readonly contexts: RenderMemo
  /** The last `RenderedPrompt`, with what it was derived from. */
  prompt?: {
    readonly version: number
    readonly sources: SourceTable<SectionSource> | undefined
    readonly origins: string
    readonly restored: string
    readonly rendered: RenderedPrompt
  }
}

// Held weakly by the engine's slot: a released scope drops its slot, and so its caches.
const caches = new WeakMap<RenderSlot, SlotCache>()

function cacheOf(slot: RenderSlot): SlotCache {
  let cache = caches.get(slot)
  if (cache === undefined) caches.set(slot, (cache = { sections: new RenderMemo(), contexts: new RenderMemo() }))
  return cache
}

/**
 * Names a rendered item after the registration it came from, so a scoped
 * entry's error says `in scope "agent-1"`; an item only a waterfall listener
 * supplied is `kind "name"`.
 */
function ownerIn(table: SourceTable<{ readonly name: string; readonly layer: 'global' | object }> | undefined, kind: string): RenderOwner {
  if (table === undefined) return kind
  return (name) => {
    const layer = table.byName.get(name)?.layer
    return entryLabel(kind, name, layer === undefined || layer === 'global' ? undefined : layer)
  }
}

/** Renders the sections or contexts of a recorded result through its scope's memo. */
function memoized(record: AssemblyRecord, assembly: Renderable, which: 'sections' | 'contexts'): RenderMemo {
  const cache = cacheOf(record.slot)
  const { provenance } = record
  const memo = which === 'sections' ? cache.sections : cache.contexts
  const owner = which === 'sections' ? ownerIn(provenance.sections, 'prompt section') : ownerIn(provenance.contexts, 'runtime context')
  memo.render(assembly[which]!, assembly.variables, owner, record.slot.stats)
  return memo
}

/** Where each reference's substituted value lies in the output of `template`, from the values themselves. */
function substitutionsOf(template: Template | undefined, variables: Variables): RenderedSubstitution[] {
  if (template === undefined) return []
  const out: RenderedSubstitution[] = []
  const { parts, refs } = template
  let offset = parts[0]!.length
  for (let i = 0; i < refs.length; i++) {
    // The output was filled from these values, so each one is defined here.
    const end = offset + variables[refs[i]!]!.length
    out.push({ variable: refs[i]!, start: offset, end })
    offset = end + parts[i + 1]!.length
  }
  return out
}

function namesOf(template: Template | undefined): readonly string[] {
  if (template === undefined) return []
  return [...new Set(template.refs)]
}

/**
 * Builds the parts of a render: each non-empty output with its source. A
 * section keeps `origin: 'registry'` while its name and text are the ones the
 * registry collected; a listener's own or edited section is `'waterfall'`.
 */
function partsOf(
  sections: readonly RenderItem[],
  variables: Variables,
  outputs: readonly string[],
  templates: readonly (Template | undefined)[],
  record: AssemblyRecord | undefined,
): PartInput[] {
  const sources = record?.provenance.sections
  const collected = record?.provenance.collected
  const restored = record?.provenance.restored
  const parts: PartInput[] = []
  for (let i = 0; i < sections.length; i++) {
    const text = outputs[i]!
    if (text === '') continue
    const { name } = sections[i]!
    const index = sources?.indexOf.get(name)
    const source = index === undefined ? undefined : sources!.list[index]
    const collectedText = index === undefined ? undefined : collected?.[index]
    const template = templates[i]
    parts.push({
      name,
      text,
      layer: source?.layer,
      origin: source !== undefined && collectedText === sections[i]!.text ? 'registry' : 'waterfall',
      stability: source?.stability ?? 'session',
      variables: namesOf(template),
      cacheBreakpoint: source?.cacheBreakpoint ?? false,
      required: source?.required ?? false,
      restored: restored !== undefined && restored.length > 0 && restored.includes(name),
      complete: source?.complete ?? false,
      priority: source?.priority ?? 0,
      substitutions: substitutionsOf(template, variables),
    })
  }
  return parts
}

/** The variables `parts` reference, with their supplying layer and declared stability. */
function variablesOf(parts: readonly PartInput[], record: AssemblyRecord | undefined): RenderedVariable[] {
  const table = record?.provenance.variables
  const seen = new Set<string>()
  const out: RenderedVariable[] = []
  for (const part of parts) {
    for (const name of part.variables) {
      if (seen.has(name)) continue
      seen.add(name)
      const source = table?.byName.get(name)
      out.push({ name, layer: source?.layer, stability: source?.stability ?? 'session' })
    }
  }
  return out
}

const ALL_COLLECTED = 'collected'

/**
 * A fingerprint of which sections still carry their collected name and text
 * (origins can change while outputs do not). The common case, a presentation
 * no listener touched, is one identity comparison per section.
 */
function originsOf(sections: readonly RenderItem[], record: AssemblyRecord): string {
  const { sections: sources, collected } = record.provenance
  if (sources === undefined || collected === undefined) return ''
  const { list, indexOf } = sources
  let untouched = sections.length === list.length
  for (let i = 0; untouched && i < sections.length; i++) {
    untouched = sections[i]!.name === list[i]!.name && sections[i]!.text === collected[i]
  }
  if (untouched) return ALL_COLLECTED
  let out = ''
  for (const { name, text } of sections) {
    const index = indexOf.get(name)
    out += index !== undefined && collected[index] === text ? '1' : '0'
  }
  return out
}

/**
 * The rendered system prompt of `assembly` as data (SPEC §4.1): the joined
 * text, one part per non-empty section with its supplying layer, origin,
 * stability, variables and flags, and the cache blocks. Strict like
 * `renderPrompt`: an unknown, valueless or malformed reference throws an
 * `Error` naming the section.
 *
 * Memoized for results of `assemble()`: an unchanged assembly of a scope
 * returns the same frozen `RenderedPrompt` object as the previous render of
 * that scope. Any other object (a copy, say) renders from scratch, and its
 * parts carry no layer (`origin: 'waterfall'`, default options).
 */
export function render(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): RenderedPrompt {
  const record = recordOf(assembly)
  if (record === undefined) {
    const items = assembly.sections.map((item) => renderItem(item, assembly.variables, 'prompt section'))
    const parts = partsOf(
      assembly.sections,
      assembly.variables,
      items.map((item) => item.output),
      items.map((item) => item.template),
      undefined,
    )
    return buildRenderedPrompt(parts, variablesOf(parts, undefined))
  }
  const memo = memoized(record, assembly, 'sections')
  const cache = cacheOf(record.slot)
  const sources = record.provenance.sections
  const origins = originsOf(assembly.sections, record)
  const restored = record.provenance.restored?.join('\0') ?? ''
  const last = cache.prompt
  let rendered: RenderedPrompt
  if (
    last !== undefined &&
    last.version === memo.version &&
    last.sources === sources &&
    last.origins === origins &&
    last.restored === restored
  ) {
    rendered = last.rendered
  } else {
    const parts = partsOf(assembly.sections, assembly.variables, memo.outputs, memo.templates, record)
    rendered = buildRenderedPrompt(parts, variablesOf(parts, record))
    cache.prompt = { version: memo.version, sources, origins, restored, rendered }
  }
  // Config `stabilityGuard: 'error'` (SPEC §5), carried by the provenance.
  if (record.provenance.stabilityGuard === 'error') guardStability(rendered)
  return rendered
}

/**
 * Renders the system prompt of `assembly`: interpolates `{{name}}` in each
 * section (unless `interpolate: false`), drops empty results and joins the
 * rest with a blank line. Strict: an unknown name, a name without a value or
 * a malformed reference throws an `Error` naming the section. Equals
 * `render(assembly).text`, and is memoized the same way.
 */
export function renderPrompt(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): string {
  return render(assembly).text
}

function plainOutputs(items: readonly RenderItem[], variables: Variables, kind: string): string[] {
  return items.map((item) => renderItem(item, variables, kind).output)
}

function contextOutputs(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): readonly string[] {
  const record = recordOf(assembly)
  if (record === undefined) return plainOutputs(assembly.contexts, assembly.variables, 'runtime context')
  return memoized(record, assembly, 'contexts').outputs
}

/**
 * Renders each runtime context of `assembly` (interpolated unless
 * `interpolate: false`), keeping only non-empty ones, in the assembly's
 * order. Returns a fresh array the caller owns.
 */
export function renderContextSections(
  assembly: Pick<PromptPresentation, 'contexts' | 'variables'>,
): RenderedContextSection[] {
  const outputs = contextOutputs(assembly)
  const out: RenderedContextSection[] = []
  for (let i = 0; i < outputs.length; i++) {
    if (outputs[i] !== '') out.push({ name: assembly.contexts[i]!.name, text: outputs[i]! })
  }
  return out
}

/**
 * Joins rendered context sections into one snapshot: `''` when there are
 * none, else the runtime-context header, a blank line, and the sections'
 * texts separated by blank lines.
 */
export function joinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  const parts = [RUNTIME_CONTEXT_HEADER]
  for (const { text } of sections) parts.push(text)
  return parts.join(PART_SEPARATOR)
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  const record = recordOf(assembly)
  if (record === undefined) return joinContextSections(renderContextSections(assembly))
  const memo = memoized(record, assembly, 'contexts')
  return (memo.joined ??= joinContextSections(memo.outputs.filter((output) => output !== '').map((text) => ({ text }))))
}
