import type { ReplayedStep } from '../surface/session-log-replay.js'

/**
 * A replayed step's prompt cut into its parts, from the step record's
 * `sections` and `sectionLengths` (the log holds each prompt text once, in
 * its `system/message` events, and one length per part per step).
 */

/** One sent part of a replayed step. */
export interface StepPart {
  readonly name: string
  readonly text: string
  /** `'global'`, the supplying scope's label, or `undefined` when the log does not say. */
  readonly layer: string | undefined
  /** Its token count by the budget's rule, when the log has it. */
  readonly tokens: number | undefined
}

const SEPARATOR = '\n\n'

/**
 * The parts of `step.prompt`, or `undefined` when the log cannot say: no
 * section lengths (a log from before they were recorded), lists of different
 * lengths, or lengths that do not add up to the prompt the model holds (an
 * in-history step whose prompt was empty keeps the previous text).
 */
export function stepParts(step: Pick<ReplayedStep, 'prompt' | 'sections' | 'sectionLengths' | 'sectionLayers' | 'sectionTokens'>): StepPart[] | undefined {
  const { prompt, sections, sectionLengths: lengths } = step
  if (sections === undefined || lengths === undefined || lengths.length !== sections.length) return undefined
  const layers = step.sectionLayers?.length === sections.length ? step.sectionLayers : undefined
  const tokens = step.sectionTokens?.length === sections.length ? step.sectionTokens : undefined
  const parts: StepPart[] = []
  let at = 0
  for (let i = 0; i < sections.length; i++) {
    if (i > 0) {
      if (!prompt.startsWith(SEPARATOR, at)) return undefined
      at += SEPARATOR.length
    }
    const end = at + lengths[i]!
    if (end > prompt.length) return undefined
    parts.push({ name: sections[i]!, text: prompt.slice(at, end), layer: layers?.[i] ?? undefined, tokens: tokens?.[i] })
    at = end
  }
  return at === prompt.length ? parts : undefined
}
