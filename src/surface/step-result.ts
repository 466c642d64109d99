import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { BudgetWarning } from './budget.js'
import type { CacheBreak } from './cache-break.js'
import type { CacheNote } from './cache-rules.js'
import type { StabilityWarning } from './stability-lint.js'
import type { SurfaceEvent } from './surface-events.js'

/** A finding on a step result: the cache-stability lint's, or the token budget's. */
export type StepWarning = StabilityWarning | BudgetWarning

/**
 * What one step did to the log and to the reusable prompt prefix (SPEC §3).
 * Lengths are UTF-16 code units, bytes UTF-8 cut back to whole code points.
 */
export interface StepResult {
  /** 1-based step number on this surface. */
  readonly step: number
  /** The step's `compacted` flag, echoed for the session log. */
  readonly compacted: boolean
  /** In order: `system/message`, `request/header`, `context/snapshot`, each at most once. */
  readonly events: SurfaceEvent[]
  /** The length of the rendered prompt identical to the previous step's (0 on the first step). */
  readonly stablePrefixLength: number
  /** The same prefix in UTF-8 bytes. */
  readonly stablePrefixBytes: number
  /** Sections whose output changed (a missing one counts as empty) or that only moved to the first divergence, in prompt order. */
  readonly changedSections: string[]
  /** `changedSections[0]`, where the prompt first diverges; absent when nothing changed. */
  readonly firstChangedSection?: string
  /** New cache-stability findings (each reported once per surface), then the budget's. */
  readonly warnings: StepWarning[]
  /** The `RenderedPrompt` that was compared and sent: `render(assembly)`, less any withheld sections. */
  readonly rendered: RenderedPrompt
  /** The tools serialize differently from the previous step's (`false` on the first step). */
  readonly toolsChanged: boolean
  /** The config serializes differently from the previous step's (`false` on the first step). */
  readonly configChanged: boolean
  /** The prefix a provider cache can reuse: providers cache tools → system → messages, so 0 when tools or config changed. */
  readonly reusablePrefixLength: number
  /** The same prefix in UTF-8 bytes. */
  readonly reusablePrefixBytes: number
  /** `countTokens` of the stable prefix (only with `countTokens` or a budget). */
  readonly stablePrefixTokens?: number
  /** `countTokens` of the reusable prefix (only with `countTokens` or a budget). */
  readonly reusablePrefixTokens?: number
  /** `countTokens` of the whole prompt (only with `countTokens` or a budget). */
  readonly promptTokens?: number
  /** Each sent part's token count by the budget's rule, in prompt order (only when the budget's `countTokens` gives the figures). */
  readonly partTokens?: readonly number[]
  /** The sections the budget withholds, in prompt order (only with a `budget`). */
  readonly withheld?: readonly string[]
  /** The prompt exceeds `maxTokens` although every withholdable section is withheld (only with a `budget`). */
  readonly overBudget?: boolean
  /** The system-prompt tokens the provider is expected to serve from its cache (only with `cacheRules`; SPEC §4.3). */
  readonly expectedCachedTokens?: number
  /** Why a reusable prefix is not expected to be cached (only with `cacheRules`). */
  readonly cacheNote?: CacheNote
  /** Why this step lost reuse: the first cause in prefix order; absent when nothing was lost. */
  readonly cacheBreak?: CacheBreak
}
