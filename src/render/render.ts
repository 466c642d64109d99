import { labelInLayer } from '../assembly/entries.js'
import { recordOf, sourceNamed, type AssemblyRecord, type RenderSlot, type SourceTable } from '../assembly/provenance.js'
import type { PromptPresentation } from '../assembly/types.js'
import { partsOf, shareParts, variablesOf, type PreviousParts } from './prompt-parts.js'
import { fillOf, ownerOfKind, RenderMemo, type Fill, type RenderItem, type RenderOwner } from './render-memo.js'
import { buildRenderedPrompt, PART_SEPARATOR, type RenderedPrompt } from './rendered-prompt.js'
import { guardStability } from './stability-guard.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

/** One rendered runtime-context section. */
export interface RenderedContextSection {
  name: string
  /** Its rendered (interpolated), non-empty text. */
  text: string
}

/** The last prompt of a scope, with everything it was made from (compared by identity). */
interface LastPrompt extends PreviousParts {
  readonly all: readonly Fill[]
  readonly record: AssemblyRecord
  readonly prompt: RenderedPrompt
}

/** What the render layer keeps per scope: a memo for its sections and one for its contexts, and their last results. */
interface SlotCache {
  readonly sections: RenderMemo
  readonly contexts: RenderMemo
  prompt: LastPrompt | undefined
  snapshot: { readonly fills: readonly Fill[]; readonly text: string } | undefined
}

// Keyed by the engine's slot: a released scope drops its slot, and so its caches.
const caches = new WeakMap<RenderSlot, SlotCache>()

function cacheOf(slot: RenderSlot): SlotCache {
  let cache = caches.get(slot)
  if (cache === undefined) caches.set(slot, (cache = { sections: new RenderMemo(), contexts: new RenderMemo(), prompt: undefined, snapshot: undefined }))
  return cache
}

/** Names an item after the registration it came from (`in scope "agent-1"`); an item only a listener supplied is `kind "name"`. */
function ownerIn(table: SourceTable<{ readonly name: string; readonly layer: 'global' | object }> | undefined, kind: string): RenderOwner {
  if (table === undefined) return ownerOfKind(kind)
  return (name) => labelInLayer(kind, name, sourceNamed(table, name)?.layer)
}

/** Whether `last` was rendered from the same fills and the same provenance, so it is this render's prompt too. */
function sameAsLast(last: LastPrompt | undefined, fills: readonly Fill[], record: AssemblyRecord): boolean {
  if (last === undefined || last.all !== fills) return false
  const a = last.record.provenance
  const b = record.provenance
  return (
    a.sections === b.sections &&
    a.collected === b.collected &&
    a.variables === b.variables &&
    (a.restored ?? []).join('\0') === (b.restored ?? []).join('\0')
  )
}

/**
 * The rendered system prompt of `assembly` as data (SPEC §4.1): the joined
 * text, one part per non-empty section with its supplying layer, origin,
 * stability, variables and flags, and the cache blocks. Strict like
 * `renderPrompt`: an unknown, valueless or malformed reference throws an
 * `Error` naming the section.
 *
 * Memoized for results of `assemble()`: a section whose text and referenced
 * values are unchanged is not rendered again, an unchanged assembly of a
 * scope returns the same frozen `RenderedPrompt` as the previous render of
 * that scope, and a changed one keeps the parts before the change. Any other
 * object (a copy, say) renders from scratch, and its parts carry no layer
 * (`origin: 'waterfall'`, default options).
 *
 * @example
 * ```ts
 * import { render } from 'promptloom'
 *
 * const rendered = render(await app.systemPrompt.assemble({ scope: agent }))
 * for (const part of rendered.parts) console.log(part.name, part.layer, part.stability, part.text.length)
 * for (const block of rendered.blocks) console.log(block.cacheBreakpoint ? 'breakpoint' : '-', block.parts.length)
 * ```
 */
export function render(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): RenderedPrompt {
  const record = recordOf(assembly)
  if (record === undefined) {
    const owner = ownerOfKind('prompt section')
    const { inputs } = partsOf(assembly.sections.map((item) => fillOf(item, assembly.variables, owner)), undefined, undefined)
    return buildRenderedPrompt(inputs, variablesOf(inputs, undefined))
  }
  const cache = cacheOf(record.slot)
  const { sections } = record.provenance
  const all = cache.sections.render(assembly.sections, assembly.variables, ownerIn(sections, 'prompt section'), record.slot.stats, sections)
  const last = cache.prompt
  if (sameAsLast(last, all, record)) return last!.prompt
  const { inputs, fills, sources } = partsOf(all, record, last)
  const prompt = buildRenderedPrompt(inputs, variablesOf(inputs, record), last?.prompt)
  // Config `stabilityGuard: 'error'` (SPEC §5), carried by the provenance; a prompt that fails it is never kept.
  if (record.provenance.stabilityGuard === 'error') guardStability(prompt)
  shareParts(prompt.parts, sources)
  cache.prompt = { all, fills, parts: prompt.parts, record, prompt }
  return prompt
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

/** The context fills of `assembly`: through its scope's memo when it carries a record. */
function contextFills(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>, record: AssemblyRecord | undefined): readonly Fill[] {
  if (record === undefined) {
    const owner = ownerOfKind('runtime context')
    return assembly.contexts.map((item: RenderItem) => fillOf(item, assembly.variables, owner))
  }
  const { contexts } = record.provenance
  return cacheOf(record.slot).contexts.render(assembly.contexts, assembly.variables, ownerIn(contexts, 'runtime context'), record.slot.stats, contexts)
}

/**
 * Renders each runtime context of `assembly` (interpolated unless
 * `interpolate: false`), keeping only non-empty ones, in the assembly's
 * order. Returns a fresh array the caller owns.
 */
export function renderContextSections(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): RenderedContextSection[] {
  return contextFills(assembly, recordOf(assembly))
    .filter((fill) => fill.output !== '')
    .map((fill) => ({ name: fill.name, text: fill.output }))
}

/**
 * Joins rendered context sections into one snapshot: `''` when there are
 * none, else the runtime-context header, a blank line, and the sections'
 * texts separated by blank lines.
 */
export function joinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  return [RUNTIME_CONTEXT_HEADER, ...sections.map((section) => section.text)].join(PART_SEPARATOR)
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  const record = recordOf(assembly)
  const fills = contextFills(assembly, record)
  if (record === undefined) return joinContextSections(fills.map((fill) => ({ text: fill.output })).filter((section) => section.text !== ''))
  const cache = cacheOf(record.slot)
  if (cache.snapshot?.fills !== fills) {
    cache.snapshot = { fills, text: joinContextSections(fills.filter((fill) => fill.output !== '').map((fill) => ({ text: fill.output }))) }
  }
  return cache.snapshot.text
}
