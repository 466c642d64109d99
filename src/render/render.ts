import { volatileReferenceError } from '../assembly/diagnostics.js'
import { badItem, checkRecord, entryLabel, isNamedText, type Culprit } from '../assembly/errors.js'
import { recordOf, sourceNamed, type AssemblyRecord, type RenderSlot } from '../assembly/provenance.js'
import type { PromptPresentation } from '../assembly/types.js'
import { sameItems } from '../assembly/view.js'
import { partsOf, variablesOf } from './prompt-parts.js'
import { fillOf, NONE, RenderMemo, type Fill, type RenderItem, type RenderOwner, type Variables } from './render-memo.js'
import { PART_SEPARATOR, promptOf, type RenderedPrompt } from './rendered-prompt.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER = 'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

/** One rendered runtime-context section; `text` is its interpolated, non-empty text. */
export interface RenderedContextSection {
  name: string
  text: string
}

interface SlotCache {
  readonly sections: RenderMemo
  readonly contexts: RenderMemo
  /** The last prompt, with what it was made from (compared by identity). */
  prompt: { readonly all: readonly Fill[]; readonly record: AssemblyRecord; readonly prompt: RenderedPrompt } | undefined
  snapshot: { readonly fills: readonly Fill[]; readonly text: string } | undefined
}

const TO_RENDER: Culprit = { is: 'the assembly to render is', has: 'the assembly to render has',
  fix: 'pass the result of systemPrompt.assemble()', kind: TypeError }
const SECTIONS = ['sections'] as const
const CONTEXTS = ['contexts'] as const

// Keyed by the engine's slot: a released scope drops its slot, and so its caches.
const caches = new WeakMap<RenderSlot, SlotCache>()

function cacheOf(slot: RenderSlot): SlotCache {
  let cache = caches.get(slot)
  if (cache === undefined) caches.set(slot, (cache = { sections: new RenderMemo(), contexts: new RenderMemo(), prompt: undefined, snapshot: undefined }))
  return cache
}

/** Whether `last` was rendered from the same fills and the same provenance, so it is this render's prompt too. */
function sameAsLast(last: SlotCache['prompt'], fills: readonly Fill[], record: AssemblyRecord): boolean {
  if (last === undefined || last.all !== fills) return false
  const a = last.record.provenance
  const b = record.provenance
  return (
    a.sections === b.sections &&
    a.collected === b.collected &&
    a.variables === b.variables &&
    sameItems(a.restored ?? NONE, b.restored ?? NONE)
  )
}

/**
 * The rendered system prompt of `assembly` as data (SPEC §4.1), strict like `renderPrompt`. Memoized for results of
 * `assemble()`: an unchanged assembly returns the same frozen `RenderedPrompt`, a changed one keeps the parts before the
 * change. Any other object (a copy) renders from scratch, its parts without layers.
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
  checkRecord(TO_RENDER, assembly, SECTIONS)
  const record = recordOf(assembly)
  const all = fillsOf(assembly.sections, 'sections', assembly.variables, record)
  if (record === undefined) {
    const parts = partsOf(all, undefined)
    return promptOf(parts, variablesOf(parts, undefined))
  }
  const cache = cacheOf(record.slot)
  const last = cache.prompt
  if (sameAsLast(last, all, record)) return last!.prompt
  const parts = partsOf(all, record, last?.prompt.parts)
  const prompt = promptOf(parts, variablesOf(parts, record), last?.prompt)
  // A prompt that fails the guard is never kept.
  if (record.provenance.stabilityGuard === 'error') guardStability(prompt)
  cache.prompt = { all, record, prompt }
  return prompt
}

/**
 * Config `stabilityGuard: 'error'` (SPEC §5): throws the hazard's `Error` for the first part, in prompt order, that is
 * not volatile and references a volatile variable. The mode travels in the provenance, so a copy is not guarded.
 */
function guardStability({ parts, variables }: RenderedPrompt): void {
  if (!variables.some((variable) => variable.stability === 'volatile')) return
  for (const part of parts) {
    if (part.stability === 'volatile') continue
    for (const name of part.variables) {
      const variable = variables.find((v) => v.name === name)
      if (variable?.stability === 'volatile') throw volatileReferenceError(part.name, part.layer, name, variable.layer)
    }
  }
}

/**
 * The system prompt text, `render(assembly).text`: each section interpolated (unless `interpolate: false`), empty ones
 * dropped, joined by a blank line. An unknown, valueless or malformed reference throws an `Error` naming the section; a
 * non-string value, or an assembly without a sections array, a variables record or string item names and texts, a `TypeError`.
 */
export function renderPrompt(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): string {
  return render(assembly).text
}

/** The fills of `items`, an assembly's sections or contexts: through its scope's memo when it carries a `record`. */
function fillsOf(items: readonly RenderItem[], kind: 'sections' | 'contexts', variables: Variables, record?: AssemblyRecord) {
  const table = record?.provenance[kind]
  const label = kind === 'sections' ? 'prompt section' : 'runtime context'
  // `prompt section "intro"`, plus ` in scope "agent-1"` after the registration it came from (none: a listener's, or a copy).
  const owner: RenderOwner = (name) => entryLabel(label, name, table && sourceNamed(table, name)?.layer)
  // Items are checked where they are read, in the one pass over them (`checkRecord` checked the arrays).
  const invalid = (index: number) => badItem(TO_RENDER, kind, index, items[index])
  if (record === undefined) {
    return items.map((item, i) => {
      if (!isNamedText(item)) throw invalid(i)
      return fillOf(item, variables, owner)
    })
  }
  return cacheOf(record.slot)[kind].render(items, variables, owner, record.slot.stats, table, invalid)
}

function sectionsOf(fills: readonly Fill[]): RenderedContextSection[] {
  return fills.filter((fill) => fill.output !== '').map((fill) => ({ name: fill.name, text: fill.output }))
}

/** The non-empty runtime contexts of `assembly`, interpolated unless `interpolate: false`, in order; a fresh array. */
export function renderContextSections(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): RenderedContextSection[] {
  checkRecord(TO_RENDER, assembly, CONTEXTS)
  return sectionsOf(fillsOf(assembly.contexts, 'contexts', assembly.variables, recordOf(assembly)))
}

/** `''` for no sections, else the runtime-context header and the sections' texts, joined by blank lines. */
export function joinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  return [RUNTIME_CONTEXT_HEADER, ...sections.map((section) => section.text)].join(PART_SEPARATOR)
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  checkRecord(TO_RENDER, assembly, CONTEXTS)
  const record = recordOf(assembly)
  const fills = fillsOf(assembly.contexts, 'contexts', assembly.variables, record)
  if (record === undefined) return joinContextSections(sectionsOf(fills))
  const cache = cacheOf(record.slot)
  if (cache.snapshot?.fills !== fills) cache.snapshot = { fills, text: joinContextSections(sectionsOf(fills)) }
  return cache.snapshot.text
}
