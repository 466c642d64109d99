import { describeValue } from '../assembly/errors.js'
import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { BudgetWarning } from './budget.js'
import type { CacheBreak } from './cache-break.js'
import type { CacheNote } from './cache-rules.js'
import type { StabilityWarning } from './stability-lint.js'

/** A finding on a step result: the cache-stability lint's, or the token budget's. */
export type StepWarning = StabilityWarning | BudgetWarning

/** What one step did to the log and the reusable prompt prefix (SPEC §3): UTF-16 lengths, UTF-8 bytes of whole code points. */
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

/** The rendered system prompt as a surface message: `'append'` adds it at `node`; `'replace'` rewrites node 0. */
export interface SystemMessageEvent {
  readonly type: 'system/message'
  readonly op: 'append' | 'replace'
  /** 0, or the history length for an in-history update. */
  readonly node: number
  readonly text: string
}

/** The request's config and tool declarations (never the prompt), as deep-frozen JSON copies. */
export interface RequestHeaderEvent {
  readonly type: 'request/header'
  readonly config: Readonly<Record<string, unknown>>
  /** In assembly order. */
  readonly tools: readonly ToolSchema[]
  /** `'initial'`, or what changed: `tools changed (added grep; removed ls; changed bash; reordered)`, `config changed`, joined by `; `. */
  readonly reason: string
}

/** A runtime-context snapshot, recorded after the retained history. */
export interface ContextSnapshotEvent {
  readonly type: 'context/snapshot'
  readonly text: string
  readonly sections: readonly RenderedContextSection[]
}

/** One session-log operation produced by a step (SPEC §3). */
export type SurfaceEvent = SystemMessageEvent | RequestHeaderEvent | ContextSnapshotEvent

/** What a provider reported about one step's prompt tokens (see `usageFromAnthropic` / `usageFromOpenAI`). */
export interface ObservedUsage {
  /** Every prompt token the provider processed, cached ones included. */
  readonly inputTokens: number
  /** The prompt tokens read from the provider's cache. */
  readonly cachedInputTokens: number
  /** The prompt tokens written to the cache (Anthropic reports them). */
  readonly cacheWriteTokens?: number
  /** Of those, the ones written with Anthropic's 5-minute TTL (when the provider splits them). */
  readonly cacheWrite5mTokens?: number
  /** Of those, the ones written with Anthropic's 1-hour TTL (when the provider splits them). */
  readonly cacheWrite1hTokens?: number
}

/** The record `observeUsage` returns and the session log stores beside its step. */
export interface UsageRecord extends ObservedUsage {
  readonly type: 'usage'
  /** The step the usage belongs to (the latest step taken). */
  readonly step: number
  /** That step's `reusablePrefixTokens`: what promptloom predicted the cache could reuse (only with `countTokens`). */
  readonly predictedTokens?: number
  /** That step's `expectedCachedTokens`: what the provider's rules let it serve from cache (only with `cacheRules`). */
  readonly expectedTokens?: number
}

const READERS = 'usageFromAnthropic, usageFromOpenAI, usageFromDeepSeek or usageFromAISDK'
const CACHE_WRITES = ['cacheWriteTokens', 'cacheWrite5mTokens', 'cacheWrite1hTokens'] as const

/** Step `step`'s usage record; throws a `TypeError` naming a field that is not a token count, or more cached than input. */
export function usageRecordOf(usage: ObservedUsage, step: number, predicted: number | undefined, expected: number | undefined): UsageRecord {
  if (typeof usage !== 'object' || usage === null) {
    throw new TypeError(`observeUsage expects { inputTokens, cachedInputTokens, cacheWriteTokens? } (got ${describeValue(usage)})`)
  }
  const inputTokens = tokenCount('inputTokens', usage.inputTokens)
  const cachedInputTokens = tokenCount('cachedInputTokens', usage.cachedInputTokens)
  if (cachedInputTokens > inputTokens) {
    throw new TypeError(
      `observeUsage field "cachedInputTokens" (${cachedInputTokens}) exceeds "inputTokens" (${inputTokens}); cached tokens are part of the input tokens — read the usage with ${READERS}`,
    )
  }
  const writes = CACHE_WRITES.filter((field) => usage[field] !== undefined).map((field) => [field, tokenCount(field, usage[field])])
  return {
    type: 'usage',
    step,
    inputTokens,
    cachedInputTokens,
    ...Object.fromEntries(writes),
    ...(predicted === undefined ? {} : { predictedTokens: predicted }),
    ...(expected === undefined ? {} : { expectedTokens: expected }),
  }
}

function tokenCount(field: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  throw new TypeError(`observeUsage field "${field}" must be a non-negative finite number (got ${describeValue(value)}); read it with ${READERS}`)
}
