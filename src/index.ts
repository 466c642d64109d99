export { batch } from '@preact/signals-core'
export { SignalTable } from './signals/signal-table.js'
export { isReadonlySignal } from './signals/is-signal.js'
export { ownedEffect, type EffectOwner } from './signals/owned-effect.js'
export { scopeOf, type ScopeKey, type Scoped } from './scope/scope-key.js'
export {
  bindScopeParent,
  scopeChainOf,
  scopeParentOf,
  type ScopeParentBinding,
} from './scope/parent-chain.js'
export { carrierKeyOf, isScopeCarrier, scopeTarget } from './scope/carrier.js'
export { createScope, type CreateScopeOptions, type Scope } from './scope/create-scope.js'
export { NamedEntries, type Undo } from './scope/named-entries.js'
export { AnonymousEntries } from './scope/anonymous-entries.js'
export { ScopedLayers, type LayerEffectOptions, type ScopeLayer } from './scope/scoped-layers.js'
export { SystemPrompt, SystemPrompt as default } from './assembly/service.js'
export type { SystemPromptConfig } from './assembly/config.js'
export { assembleContextFor, type AgentAssembleContext } from './assembly/assemble-context.js'
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
  RegistrationDisposer,
  Stability,
  TextSource,
  ToolProvider,
  ToolProviderResult,
  ToolSchema,
  VariableOptions,
  VariableSource,
} from './assembly/types.js'
export type { PromptStats } from './assembly/stats.js'
export type { InspectedEntry, InspectedTools, LayerRef, PromptInspection } from './assembly/inspect.js'
export {
  joinContextSections,
  renderContextSections,
  renderContextSnapshot,
  renderPrompt,
  RUNTIME_CONTEXT_HEADER,
  type RenderedContextSection,
} from './assembly/render.js'
export {
  createStepSurface,
  type ContextSnapshotEvent,
  type RequestHeaderEvent,
  type StepInput,
  type StepResult,
  type StepSurface,
  type StepSurfaceOptions,
  type SurfaceEvent,
  type SystemMessageEvent,
  type SystemPromptUpdate,
} from './assembly/step-surface.js'
export type { StabilityWarning } from './assembly/stability-lint.js'
export {
  createSessionLogWriter,
  parseSessionLog,
  readSessionLog,
  serializeStep,
  type ReplayedStep,
  type SessionLogRecord,
  type SessionLogStepRecord,
  type SessionLogWarning,
  type SessionLogWriter,
  type SessionLogWriterOptions,
} from './assembly/session-log.js'
