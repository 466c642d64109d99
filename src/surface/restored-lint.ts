/**
 * The step surface's notice about required sections (SPEC §5): a
 * `system-prompt/assemble` listener that dropped, edited or reordered a
 * `required: true` section is not an error (the assembly undid it), but the
 * harness author should hear of it once. Reads the `RenderedPrompt` only: a
 * part the assembly restored carries `restored: true`.
 */

import { type LayerRef } from '../assembly/entries.js'
import { entryLabel } from '../assembly/errors.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { PendingWarning, ReportedWarnings, StabilityWarning } from './stability-lint.js'

function sectionLabel(name: string, layer: LayerRef | undefined): string {
  if (layer === 'global') return `prompt section "${name}" in the global layer`
  return entryLabel('prompt section', name, layer)
}

/**
 * One `'required-restored'` finding per restored part not yet reported by
 * this surface (per section and supplying layer), in prompt order.
 */
export function lintRestored(rendered: RenderedPrompt, reported: ReportedWarnings): PendingWarning[] {
  const out: PendingWarning[] = []
  for (const part of rendered.parts) {
    if (!part.restored) continue
    const key = `required-restored\0${part.name}\0`
    if (reported.has(part.layer, key)) continue
    const warning: StabilityWarning = {
      kind: 'required-restored',
      section: part.name,
      ...(part.layer === undefined ? {} : { layer: part.layer }),
      message: `required ${sectionLabel(part.name, part.layer)} was restored after the "system-prompt/assemble" waterfall: a listener dropped, edited or reordered it, and required sections keep their registered text and place; leave it in the listener's result, or register it without required: true if listeners may change it`,
    }
    out.push({ key, layer: part.layer, warning })
  }
  return out
}
