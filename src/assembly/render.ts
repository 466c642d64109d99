import { labelOf, type ContextEntry, type SectionEntry } from './entries.js'
import { metaOf, type AssemblyMeta } from './meta.js'
import { renderItem, type RenderedPart, type RenderItem, type RenderMemo, type RenderOwner } from './render-memo.js'
import type { PromptPresentation } from './types.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

const SEPARATOR = '\n\n'

/** One rendered runtime-context section. */
export interface RenderedContextSection {
  /** The runtime context's name. */
  name: string
  /** Its rendered (interpolated), non-empty text. */
  text: string
}

/** Joins the non-empty outputs with a blank line; `Array#join` builds one flat string (no rope to flatten later). */
function joinNonEmpty(outputs: readonly string[]): string {
  const kept: string[] = []
  for (const output of outputs) if (output !== '') kept.push(output)
  return kept.join(SEPARATOR)
}

const labelsByPlan = new WeakMap<readonly object[], Map<string, string>>()

/**
 * Names a rendered item after the registration it came from, so a scoped
 * entry's error says `in scope "agent-1"`; an item only a waterfall listener
 * supplied is `kind "name"`. The global view's labels carry no scope.
 */
function ownerIn(meta: AssemblyMeta, plan: readonly (SectionEntry | ContextEntry)[] | undefined, kind: string): RenderOwner {
  if (plan === undefined || meta.view.key === undefined) return kind
  return (name) => {
    let labels = labelsByPlan.get(plan)
    if (labels === undefined) labelsByPlan.set(plan, (labels = new Map(plan.map((entry) => [entry.name, labelOf(entry)]))))
    return labels.get(name) ?? `${kind} "${name}"`
  }
}

type Renderable = Pick<PromptPresentation, 'variables'> & {
  readonly sections?: readonly RenderItem[]
  readonly contexts?: readonly RenderItem[]
}

/**
 * Renders the sections or contexts of an assembly made by `assemble()`
 * through its scope's render memo and returns the memo; `undefined` for any
 * other object (which the caller renders from scratch).
 */
function memoized(assembly: Renderable, which: 'sections' | 'contexts'): RenderMemo | undefined {
  const meta = metaOf(assembly)
  if (meta === undefined) return undefined
  const sections = which === 'sections'
  const memo = sections ? meta.view.sectionRenders : meta.view.contextRenders
  const owner = sections
    ? ownerIn(meta, meta.sections?.entries, 'prompt section')
    : ownerIn(meta, meta.contexts?.entries, 'runtime context')
  memo.render(assembly[which]!, assembly.variables, owner, meta.stats)
  return memo
}

function plainOutputs(items: readonly RenderItem[], variables: Readonly<Record<string, string | undefined>>, kind: string): string[] {
  return items.map((item) => renderItem(item, variables, kind).output)
}

/**
 * Renders the system prompt of `assembly`: interpolates `{{name}}` in each
 * section (unless `interpolate: false`), drops empty results and joins the
 * rest with a blank line. Strict: an unknown name, a name without a value or
 * a malformed reference throws an `Error` naming the section.
 *
 * Memoized for assemblies made by `assemble()`: a section whose text and
 * referenced values are unchanged since its scope's last render is not
 * scanned again, and an unchanged prompt is returned without re-joining.
 */
export function renderPrompt(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): string {
  const memo = memoized(assembly, 'sections')
  if (memo !== undefined) return (memo.joined ??= joinNonEmpty(memo.outputs))
  return joinNonEmpty(plainOutputs(assembly.sections, assembly.variables, 'prompt section'))
}

/** One section's rendered output, with the template its references came from (`undefined`: none). */
export type RenderedPromptSection = RenderedPart

/**
 * `renderPrompt` plus every section's output in assembly order, empty ones
 * included, from one render pass. Memoized like `renderPrompt`: an unchanged
 * section yields the same output string object, and an unchanged prompt the
 * same `sections` array, as the previous render of that scope. The arrays
 * are never mutated afterwards, so a caller may keep them to compare.
 */
export function renderPromptParts(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): {
  readonly text: string
  readonly sections: readonly RenderedPromptSection[]
} {
  const memo = memoized(assembly, 'sections')
  if (memo !== undefined) return { text: (memo.joined ??= joinNonEmpty(memo.outputs)), sections: memo.parts }
  const sections = assembly.sections.map((item) => renderItem(item, assembly.variables, 'prompt section'))
  return { text: joinNonEmpty(sections.map((part) => part.output)), sections }
}

/**
 * Renders each runtime context of `assembly` (interpolated unless
 * `interpolate: false`), keeping only non-empty ones, in the assembly's
 * order. Returns a fresh array the caller owns.
 */
export function renderContextSections(
  assembly: Pick<PromptPresentation, 'contexts' | 'variables'>,
): RenderedContextSection[] {
  const outputs =
    memoized(assembly, 'contexts')?.outputs ?? plainOutputs(assembly.contexts, assembly.variables, 'runtime context')
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
  return parts.join(SEPARATOR)
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  const memo = memoized(assembly, 'contexts')
  if (memo === undefined) return joinContextSections(renderContextSections(assembly))
  return (memo.joined ??= joinContextSections(memo.outputs.filter((output) => output !== '').map((text) => ({ text }))))
}
