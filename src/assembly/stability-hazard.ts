/**
 * The stability-guard hazard (SPEC §5), as a message both its users build the
 * same way: the render-time guard (`src/render/stability-guard.ts`, config
 * `stabilityGuard: 'error'`) throws it, and `diagnostics()` predicts it.
 *
 * A variable registered with `stability: 'volatile'` changes every step; a
 * section that references it (and is not itself declared volatile) changes
 * with it, which invalidates the provider's cached prompt from that section
 * on.
 */

import { scopeOfLayer, type LayerRef } from './entries.js'
import { entryLabel } from './errors.js'

/** The two values of config `stabilityGuard`. */
export type StabilityGuard = 'warn' | 'error'

/** Every value `stabilityGuard` accepts, in the order error messages list them. */
export const STABILITY_GUARDS: readonly StabilityGuard[] = ['warn', 'error']

/** `prompt variable "clock" in the global layer`, `… in scope "agent-1"`, or plain when the layer is unknown. */
function variableInLayer(name: string, layer: LayerRef | undefined): string {
  if (layer === 'global') return `prompt variable "${name}" in the global layer`
  return entryLabel('prompt variable', name, scopeOfLayer(layer))
}

/**
 * The hazard's message: the section (labelled after its supplying layer), the
 * volatile variable and its layer, what the configured guard does about it,
 * and the two ways out.
 */
export function volatileReferenceMessage(
  guard: StabilityGuard,
  section: string,
  sectionLayer: LayerRef | undefined,
  variable: string,
  variableLayer: LayerRef | undefined,
): string {
  const consequence =
    guard === 'error'
      ? "which config stabilityGuard 'error' forbids"
      : "which the step surface warns about (config stabilityGuard 'warn'; 'error' makes it fail the render)"
  return (
    `${entryLabel('prompt section', section, scopeOfLayer(sectionLayer))} references volatile ` +
    `${variableInLayer(variable, variableLayer)}, ${consequence}: ` +
    'a value that changes every step invalidates the cached prompt from this section on; ' +
    'move it into a runtime context (systemPrompt.context()), or into a tail section registered with ' +
    "stability: 'volatile'"
  )
}

/** The hazard as the `Error` a render throws under `stabilityGuard: 'error'`. */
export function volatileReferenceError(
  section: string,
  sectionLayer: LayerRef | undefined,
  variable: string,
  variableLayer: LayerRef | undefined,
): Error {
  return new Error(volatileReferenceMessage('error', section, sectionLayer, variable, variableLayer))
}
