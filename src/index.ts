/*
 * promptloom: one model step's system prompt, from registrations to a provider request.
 *
 * 1. Register: `ctx.systemPrompt.section()/context()/variable()/tools()` (src/assembly/service.ts) insert
 *    entries into per-scope layers (src/scope/scoped-layers.ts) backed by signals (src/signals).
 * 2. Assemble: `systemPrompt.assemble({ scope })` (src/assembly/pipeline.ts) reads the scope's memoized
 *    view (src/assembly/view.ts: one computed per fact, built on the parent's), then the two waterfalls.
 * 3. Render: `renderPrompt(assembly)` (src/render/render.ts) substitutes variables into a `RenderedPrompt`.
 * 4. Surface: `createStepSurface().step()` (src/surface/step-surface.ts) decides what a step sends, and why it changed.
 * 5. Providers: `toAnthropic()`, `toOpenAIChat()`, … (src/providers) build the request with cache markers.
 */
export { batch, computed, effect, signal } from '@preact/signals-core'
export { SignalTable } from './signals/signal-table.js'
export { isReadonlySignal, ownedEffect, type EffectOwner } from './signals/tracked.js'
export { scopeOf, type ScopeKey, type Scoped } from './scope/scope-key.js'
export { bindScopeParent, carrierKeyOf, isScopeCarrier, scopeChainOf, scopeParentOf, scopeTarget } from './scope/parent-chain.js'
export type { ScopeParentBinding } from './scope/parent-chain.js'
export { createScope, type CreateScopeOptions, type Scope } from './scope/create-scope.js'
export { AnonymousEntries, NamedEntries, type Undo } from './scope/layer-entries.js'
export { ScopedLayers, type LayerEffectOptions, type ScopeLayer } from './scope/scoped-layers.js'
export { assembleContextFor, SystemPrompt, SystemPrompt as default, type AgentAssembleContext } from './assembly/service.js'
export type { StabilityGuard, SystemPromptConfig } from './assembly/config.js'
export {
  CONTEXT_ORDERS,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  SECTION_ORDERS,
  TOOL_ORDER_REST,
  type PromptContextOrderName,
  type PromptSectionOrderName,
} from './assembly/orders.js'
export type {
  AssembleContext,
  AssembledContext,
  AssembledSection,
  PromptAssembly,
  PromptContext,
  PromptPreparation,
  PromptPresentation,
  PromptSection,
  PromptStats,
  RegistrationDisposer,
  Stability,
  TextSource,
  ToolProvider,
  ToolProviderResult,
  ToolSchema,
  VariableOptions,
  VariableSource,
} from './assembly/types.js'
export type { LayerRef } from './assembly/entries.js'
export type { InspectedEntry, InspectedTools, PromptInspection } from './assembly/view.js'
export type { DiagnosticsOptions, PromptDiagnostic, PromptDiagnosticKind } from './assembly/diagnostics.js'
export {
  joinContextSections,
  render,
  renderContextSections,
  renderContextSnapshot,
  renderPrompt,
  RUNTIME_CONTEXT_HEADER,
  type RenderedContextSection,
} from './render/render.js'
export type {
  PromptBlock,
  RenderedPart,
  RenderedPrompt,
  RenderedSubstitution,
  RenderedVariable,
} from './render/rendered-prompt.js'
export { comparePrompts, explain, type PromptComparison, type PromptExplanation } from './render/explain.js'
export {
  createStepSurface,
  type StepInput,
  type StepSurface,
  type StepSurfaceOptions,
  type SystemPromptUpdate,
} from './surface/step-surface.js'
export type { ObservedUsage, StepResult, StepWarning, UsageRecord } from './surface/step-result.js'
export type { ContextSnapshotEvent, RequestHeaderEvent, SurfaceEvent, SystemMessageEvent } from './surface/step-result.js'
export type { CacheBreak, CacheBreakCause } from './surface/cache-break.js'
export type { StabilityWarning } from './surface/stability-lint.js'
export { cacheRules, type CacheNote, type CacheRules } from './surface/cache-rules.js'
export { DEFAULT_BUDGET_HEADROOM, type BudgetOptions, type BudgetSharing, type BudgetWarning } from './surface/budget.js'
export {
  serializeStep,
  serializeUsage,
  type SessionLogCacheBreak,
  type SessionLogRecord,
  type SessionLogStabilityWarning,
  type SessionLogStepRecord,
  type SessionLogWarning,
} from './surface/session-log.js'
export {
  parseSessionLog,
  SessionLogError,
  type ReplayedStep,
  type SessionLogReadWarning,
  type SessionLogReplay,
} from './surface/session-log-replay.js'
// The node:fs writer and reader (createSessionLogWriter, readSessionLog) are in src/node.ts, the promptloom/node subpath.
export {
  toAnthropic,
  type AnthropicCacheControl,
  type AnthropicContentBlockLike,
  type AnthropicMessageLike,
  type AnthropicRequest,
  type AnthropicRequestOptions,
  type AnthropicSnapshotMessage,
  type AnthropicTextBlock,
  type AnthropicTool,
} from './providers/anthropic.js'
export { ANTHROPIC_MAX_CACHE_MARKERS, type CacheTtl, type CacheTtlOption } from './providers/cache-markers.js'
export { historyOf, type HistoryOptions, type RequestAssembly, type RequestOptions } from './providers/request.js'
export {
  toOpenAIChat,
  type OpenAIChatInstructionMessage,
  type OpenAIChatMessageLike,
  type OpenAIChatRequest,
  type OpenAIChatRequestOptions,
  type OpenAIChatSnapshotMessage,
  type OpenAIChatTool,
  toOpenAIResponses,
  type OpenAIResponsesRequest,
  type OpenAIResponsesRequestOptions,
  type OpenAIResponsesSnapshotItem,
  type OpenAIResponsesTool,
} from './providers/openai.js'
export {
  toAISDK,
  type AISDKCacheControlOptions,
  type AISDKMessageLike,
  type AISDKRequest,
  type AISDKRequestOptions,
  type AISDKSnapshotMessage,
  type AISDKSystemMessage,
} from './providers/ai-sdk.js'
export {
  usageFromAISDK,
  usageFromAnthropic,
  usageFromDeepSeek,
  usageFromOpenAI,
  type AISDKUsageLike,
  type AnthropicUsageLike,
  type DeepSeekUsageLike,
  type OpenAIChatUsageLike,
  type OpenAIResponsesUsageLike,
} from './providers/usage.js'
