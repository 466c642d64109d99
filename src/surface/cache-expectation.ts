/**
 * The surface's expected provider cache reuse (SPEC §4.3): of this step's
 * system-prompt tokens, how many the provider is expected to serve from its
 * cache, by the provider's `CacheRules`, and why a reusable prefix is not.
 *
 *   first step, tools or config changed     0
 *   breakpoints (Anthropic)                 tokens through the end of the last
 *                                           marked block that lies wholly in the
 *                                           identical prefix and was marked at
 *                                           the same place last step (only a
 *                                           prefix that ended at a marker then
 *                                           was written)          else 'no-breakpoint'
 *   no breakpoints (OpenAI, DeepSeek)       reusable tokens rounded down to the granularity
 *   tools' tokens + those < minimumTokens   0, 'below-minimum'
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { CacheRules } from './cache-rules.js'

/** Why a reusable prefix is not expected to be served from the provider's cache. */
export type CacheNote = 'below-minimum' | 'no-breakpoint'

/** One step's expectation. */
export interface CacheExpectation {
  readonly expectedCachedTokens: number
  readonly cacheNote?: CacheNote
}

/** What the next step compares with: where this step's marked blocks end, and the last tools count. */
export interface ExpectationState {
  readonly markedEnds: readonly number[]
  readonly toolsJson: string | undefined
  readonly toolsTokens: number
}

/** The state before the first step. */
export const NO_EXPECTATION: ExpectationState = { markedEnds: [], toolsJson: undefined, toolsTokens: 0 }

/** What one step tells the expectation. */
export interface ExpectationInput {
  readonly rules: CacheRules
  /** Counts tokens; throws an error naming `countTokens` for a bad count (the surface's checked counter). */
  readonly count: (text: string, subject: string) => number
  readonly rendered: RenderedPrompt
  /** Nothing is reusable: the first step, or the tools or config changed. */
  readonly fresh: boolean
  /** UTF-16 code units identical to the previous step's prompt. */
  readonly stableLength: number
  readonly stablePrefixTokens: number
  readonly reusablePrefixTokens: number
  readonly promptTokens: number
  /** `JSON.stringify` of the step's tools. */
  readonly toolsJson: string
}

/** Where each marked block of `rendered` ends (UTF-16 offsets into its text), in order. */
function markedEndsOf(rendered: RenderedPrompt): number[] {
  const ends: number[] = []
  let offset = 0
  rendered.blocks.forEach((block, index) => {
    offset += (index > 0 ? 2 : 0) + block.text.length
    if (block.cacheBreakpoint) ends.push(offset)
  })
  return ends
}

/** The step's expectation and the state to keep (only when the whole step succeeds). Throws what `count` throws. */
export function expectCache(input: ExpectationInput, state: ExpectationState): { readonly expectation: CacheExpectation; readonly next: ExpectationState } {
  const { rules, count, rendered, fresh, stableLength, reusablePrefixTokens } = input
  const markedEnds = rules.breakpoints ? markedEndsOf(rendered) : []
  const toolsTokens = input.toolsJson === state.toolsJson ? state.toolsTokens : count(input.toolsJson, 'the tools (JSON.stringify(tools))')
  const next: ExpectationState = { markedEnds, toolsJson: input.toolsJson, toolsTokens }
  if (fresh || reusablePrefixTokens === 0) return { expectation: { expectedCachedTokens: 0 }, next }
  let tokens: number
  if (rules.breakpoints) {
    let end = -1
    for (const candidate of markedEnds) if (candidate <= stableLength && state.markedEnds.includes(candidate)) end = candidate
    if (end === -1) return { expectation: { expectedCachedTokens: 0, cacheNote: 'no-breakpoint' }, next }
    const { text } = rendered
    tokens = end === stableLength ? input.stablePrefixTokens : end === text.length ? input.promptTokens : count(text.slice(0, end), 'the prompt through its last cached block')
  } else {
    tokens = Math.floor(reusablePrefixTokens / rules.granularity) * rules.granularity
  }
  if (toolsTokens + tokens < rules.minimumTokens) return { expectation: { expectedCachedTokens: 0, cacheNote: 'below-minimum' }, next }
  return { expectation: { expectedCachedTokens: tokens }, next }
}
