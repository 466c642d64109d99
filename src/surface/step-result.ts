/** What one step of a step surface reports (SPEC §3). */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { BudgetWarning } from './budget.js'
import type { CacheBreak } from './cache-break.js'
import type { CacheNote } from './cache-expectation.js'
import type { StabilityWarning } from './stability-lint.js'
import type { SurfaceEvent } from './surface-events.js'

/** A finding on a step result: the cache-stability lint's, or the token budget's. */
export type StepWarning = StabilityWarning | BudgetWarning

/** What one step did to the log and to the reusable prompt prefix. */
export interface StepResult {
  /** 1-based step number on this surface. */
  readonly step: number
  /** The step's `compacted` flag, echoed for the session log. */
  readonly compacted: boolean
  /** In order: `system/message`, `request/header`, `context/snapshot`, each at most once. */
  readonly events: SurfaceEvent[]
  /** UTF-16 code units of the rendered prompt identical to the previous step's (0 on the first step). */
  readonly stablePrefixLength: number
  /** UTF-8 bytes of that prefix, cut back to whole code points. */
  readonly stablePrefixBytes: number
  /**
   * Sections whose rendered output differs from the previous step's (a missing
   * section counts as empty output), plus one that only moved to where the
   * prompt first diverges; in prompt order, a removed section where it was.
   */
  readonly changedSections: string[]
  /** `changedSections[0]`: the section where the prompt first diverges; absent when nothing changed. */
  readonly firstChangedSection?: string
  /**
   * New cache-stability findings (each reported once per surface), then the
   * budget's: the sections withheld or restored this step, and `over-budget`
   * on every step the prompt cannot fit.
   */
  readonly warnings: StepWarning[]
  /** The `RenderedPrompt` that was compared and sent: `render(assembly)`, less any withheld sections. */
  readonly rendered: RenderedPrompt
  /** The tool declarations serialize differently from the previous step's (`false` on the first step). */
  readonly toolsChanged: boolean
  /** The config serializes differently from the previous step's (`false` on the first step). */
  readonly configChanged: boolean
  /**
   * UTF-16 code units of the request prefix a provider cache can reuse:
   * providers cache tools → system → messages, so 0 when the tools or config
   * changed, else `stablePrefixLength`.
   */
  readonly reusablePrefixLength: number
  /** UTF-8 bytes of that prefix: 0 when the tools or config changed, else `stablePrefixBytes`. */
  readonly reusablePrefixBytes: number
  /** `countTokens` of the stable prefix's text (only with a `countTokens` option). */
  readonly stablePrefixTokens?: number
  /** `countTokens` of the reusable prefix's text: 0 when the tools or config changed (only with `countTokens`). */
  readonly reusablePrefixTokens?: number
  /** `countTokens` of the whole rendered prompt (only with a `countTokens` option). */
  readonly promptTokens?: number
  /**
   * The token count of each sent part (`rendered.parts`), in prompt order, by
   * the budget's rule (each part counted on its own); only with a `budget`
   * whose `countTokens` also gives the token figures.
   */
  readonly partTokens?: readonly number[]
  /** The sections the budget withholds from this step's prompt, in prompt order (only with a `budget`). */
  readonly withheld?: readonly string[]
  /** The prompt exceeds `maxTokens` although every withholdable section is withheld (only with a `budget`). */
  readonly overBudget?: boolean
  /**
   * The system-prompt tokens the provider is expected to serve from its cache
   * on this step, by its `cacheRules` (only with `cacheRules`; SPEC §4.3).
   */
  readonly expectedCachedTokens?: number
  /** Why a reusable prefix is not expected to be cached: `'below-minimum'` or `'no-breakpoint'` (only with `cacheRules`). */
  readonly cacheNote?: CacheNote
  /** Why this step lost reuse: the first cause in prefix order; absent when nothing was lost (SPEC §3). */
  readonly cacheBreak?: CacheBreak
}
