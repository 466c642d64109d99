/**
 * A small from-scratch `render(assembly)` (SPEC §4.1) so the step surface and
 * the provider builders have a `RenderedPrompt` to work from. It carries no
 * provenance yet: every part is `origin: 'registry'`, `stability: 'session'`,
 * with no layer and all flags false, so the prompt is one block without a
 * cache breakpoint. The memoized renderer with provenance replaces this file.
 */

import { renderPromptParts } from '../assembly/render.js'
import type { PromptPresentation } from '../assembly/types.js'
import { buildRenderedPrompt, type PartInput, type RenderedPrompt, type RenderedSubstitution } from './rendered-prompt.js'

/**
 * Renders `assembly` into a frozen `RenderedPrompt` whose `text` is exactly
 * `renderPrompt(assembly)`; one part per non-empty section, in prompt order.
 * Throws the render errors `renderPrompt` throws.
 */
export function render(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): RenderedPrompt {
  const { sections } = renderPromptParts(assembly)
  const inputs: PartInput[] = []
  sections.forEach((section, index) => {
    if (section.output === '') return
    const refs = section.template?.refs ?? []
    inputs.push({
      name: section.name,
      text: section.output,
      layer: undefined,
      origin: 'registry',
      stability: 'session',
      variables: [...new Set(refs)],
      cacheBreakpoint: false,
      required: false,
      complete: assembly.sections[index]?.complete === true,
      priority: 0,
      substitutions: substitutionsOf(section.template, assembly.variables),
    })
  })
  return buildRenderedPrompt(inputs)
}

function substitutionsOf(
  template: { readonly parts: readonly string[]; readonly refs: readonly string[] } | undefined,
  variables: Readonly<Record<string, string | undefined>>,
): RenderedSubstitution[] {
  if (template === undefined) return []
  const out: RenderedSubstitution[] = []
  let offset = template.parts[0]!.length
  template.refs.forEach((variable, i) => {
    const end = offset + (variables[variable] ?? '').length
    out.push({ variable, start: offset, end })
    offset = end + template.parts[i + 1]!.length
  })
  return out
}
