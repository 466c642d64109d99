import { volatileReferenceError } from '../assembly/diagnostics.js'
import type { RenderedPrompt } from './rendered-prompt.js'

/**
 * The render-time guard of config `stabilityGuard: 'error'` (SPEC §5): throws
 * the hazard's `Error` for the first part, in prompt order, that is not
 * volatile and references a volatile variable. The mode travels in the
 * assembly's provenance, never a global; a copy without it is not guarded.
 */
export function guardStability(rendered: RenderedPrompt): void {
  const { variables } = rendered
  if (!variables.some((variable) => variable.stability === 'volatile')) return
  for (const part of rendered.parts) {
    if (part.stability === 'volatile') continue
    for (const name of part.variables) {
      const variable = variables.find((v) => v.name === name)
      if (variable?.stability === 'volatile') throw volatileReferenceError(part.name, part.layer, name, variable.layer)
    }
  }
}
