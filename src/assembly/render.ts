import { metaOf } from './meta.js'
import { renderItem, type RenderItem, type RenderMemo } from './render-memo.js'
import type { PromptStats } from './stats.js'
import type { PromptPresentation } from './types.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

const SEPARATOR = '\n\n'

/** One rendered runtime-context section. */
export interface RenderedContextSection {
  name: string
  text: string
}

type Renderable = Pick<PromptPresentation, 'variables'> & {
  readonly sections?: readonly RenderItem[]
  readonly contexts?: readonly RenderItem[]
}

function renderAll(
  items: readonly RenderItem[],
  variables: Readonly<Record<string, string | undefined>>,
  kind: string,
  memo: RenderMemo | undefined,
  stats: PromptStats | undefined,
): readonly { readonly name: string; readonly output: string }[] {
  if (memo !== undefined) return memo.render(items, variables, kind, stats)
  return items.map((item) => renderItem(item, item.interpolate !== false, variables, kind))
}

function joinNonEmpty(rendered: readonly { readonly output: string }[]): string {
  let out = ''
  for (const { output } of rendered) {
    if (output === '') continue
    out = out === '' ? output : out + SEPARATOR + output
  }
  return out
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
  const meta = metaOf(assembly)
  const memo = meta?.view.sectionRenders
  const rendered = renderAll(assembly.sections, assembly.variables, 'prompt section', memo, meta?.stats)
  if (memo === undefined) return joinNonEmpty(rendered)
  return (memo.joined ??= joinNonEmpty(rendered))
}

/**
 * Renders each runtime context of `assembly` (interpolated unless
 * `interpolate: false`), keeping only non-empty ones, in the assembly's
 * order. Returns a fresh array the caller owns.
 */
export function renderContextSections(
  assembly: Pick<PromptPresentation, 'contexts' | 'variables'>,
): RenderedContextSection[] {
  const meta = metaOf(assembly)
  const rendered = renderAll(
    assembly.contexts,
    assembly.variables,
    'runtime context',
    meta?.view.contextRenders,
    meta?.stats,
  )
  const out: RenderedContextSection[] = []
  for (const { name, output } of rendered) if (output !== '') out.push({ name, text: output })
  return out
}

/**
 * Joins rendered context sections into one snapshot: `''` when there are
 * none, else the runtime-context header, a blank line, and the sections'
 * texts separated by blank lines.
 */
export function joinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  let out = RUNTIME_CONTEXT_HEADER
  for (const { text } of sections) out += SEPARATOR + text
  return out
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  const meta = metaOf(assembly)
  const memo = meta?.view.contextRenders
  if (memo === undefined) return joinContextSections(renderContextSections(assembly))
  const rendered = memo.render(assembly.contexts, assembly.variables, 'runtime context', meta!.stats)
  return (memo.joined ??= joinContextSections(
    rendered.filter((slot) => slot.output !== '').map((slot) => ({ text: slot.output })),
  ))
}
