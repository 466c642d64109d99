import type { PromptPreparation } from '../../src/assembly/types.js'
import { describe } from './entries.js'

/**
 * Checks what a waterfall resolved to (SPEC §2 "Assembly"): an object with a
 * `contexts` array (and a `sections` array for the assemble event) and a
 * `variables` record, checked in that order, whose every context and section
 * (in that order) is an object with a string `name` and `text`, and whose
 * every variable value is a string or undefined. Throws naming the event (and
 * the offending index or variable).
 */
export function checkListenerResult(event: string, result: unknown, withSections: boolean): PromptPreparation {
  const value = result as { sections?: unknown; contexts?: unknown; variables?: unknown } | null
  const missing =
    typeof value !== 'object' || value === null
      ? describe(value)
      : !Array.isArray(value.contexts)
        ? 'an object without a contexts array'
        : withSections && !Array.isArray(value.sections)
          ? 'an object without a sections array'
          : typeof value.variables !== 'object' || value.variables === null
            ? 'an object without a variables record'
            : undefined
  if (missing !== undefined) {
    throw new Error(
      `a "${event}" listener resolved to ${missing}; return (or resolve to) the value of next(), or a modified copy of it`,
    )
  }
  const lists: ['sections' | 'contexts', string][] = withSections ? [['contexts', 'context'], ['sections', 'section']] : [['contexts', 'context']]
  for (const [field, noun] of lists) {
    ;(value![field] as unknown[]).forEach((item, index) => {
      const { name, text } = (item ?? {}) as { name?: unknown; text?: unknown }
      if (typeof item !== 'object' || item === null || typeof name !== 'string' || typeof text !== 'string') {
        const shown = typeof item === 'object' && item !== null && !Array.isArray(item) ? `{ name: ${describe(name)}, text: ${describe(text)} }` : describe(item)
        throw new Error(`a "${event}" listener returned ${field}[${index}] = ${shown}; every ${noun} needs a string name and text`)
      }
    })
  }
  for (const [name, held] of Object.entries(value!.variables as Record<string, unknown>)) {
    if (typeof held !== 'string' && held !== undefined) {
      throw new Error(`a "${event}" listener returned variables.${name} = ${describe(held)}; every variable value must be a string or undefined`)
    }
  }
  return value as PromptPreparation
}
