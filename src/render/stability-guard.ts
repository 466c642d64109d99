/**
 * The render-time stability guard (SPEC §5, config `stabilityGuard: 'error'`):
 * a section not itself declared `stability: 'volatile'` that references a
 * variable registered with `stability: 'volatile'` fails the render. The mode
 * travels in the assembly's provenance (data), never in a global, so two
 * services with different configs render side by side; a result that lost its
 * provenance (a copy) is not guarded, because it no longer knows any
 * variable's stability.
 */

import { volatileReferenceError } from '../assembly/diagnostics.js'
import type { RenderedPrompt } from './rendered-prompt.js'

/**
 * Throws the hazard's `Error` for the first part (in prompt order) that is not
 * volatile and references a volatile variable, naming the section, the
 * variable and its layer; returns quietly otherwise. Reads `rendered` only.
 */
export function guardStability(rendered: RenderedPrompt): void {
  const { variables } = rendered
  let volatile = false
  for (let i = 0; i < variables.length && !volatile; i++) volatile = variables[i]!.stability === 'volatile'
  if (!volatile) return
  for (const part of rendered.parts) {
    if (part.stability === 'volatile') continue
    for (const name of part.variables) {
      const variable = variables.find((v) => v.name === name)
      if (variable?.stability === 'volatile') throw volatileReferenceError(part.name, part.layer, name, variable.layer)
    }
  }
}
