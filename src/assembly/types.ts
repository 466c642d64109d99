import type { ReadonlySignal } from '@preact/signals-core'
import type { ScopeKey } from '../scope/scope-key.js'

/** The per-assembly context, passed whole to providers; a harness may add fields by declaration merging. */
export interface AssembleContext {
  /** Scope whose layers and waterfall listeners participate; absent means global only. */
  scope?: ScopeKey
  /** The agent, as the original harness passed it (`assembleContextFor` sets it); promptloom never reads it. */
  agent?: ScopeKey
  /** Cancels this one request; checked around the waterfalls, never retained. */
  signal?: AbortSignal
}

/** Expected change rate, for the cache-stability lint: `static` (never), `session` (rarely), `volatile` (every step). */
export type Stability = 'static' | 'session' | 'volatile'

/** Text of a section or context: fixed, a signal, or evaluated on every assembly. */
export type TextSource = string | ReadonlySignal<string> | ((context: AssembleContext) => string)

/** One contributed section of the system prompt (registry input). */
export interface PromptSection {
  /** Unique within its layer; a same-named entry in a nearer layer shadows it. */
  readonly name: string
  /** Ascending; equal orders fall back to code-unit name order. Must be finite. */
  readonly order: number
  /** May reference `{{variable}}`s, interpolated by `renderPrompt` unless `interpolate` is false. */
  readonly text: TextSource
  /** `false` keeps the text literal. Default `true`. */
  readonly interpolate?: boolean
  /** The whole system prompt: restored as the only section after the waterfall. */
  readonly complete?: boolean
  /** A protocol section no `system-prompt/assemble` listener can remove or change (SPEC §5). */
  readonly required?: boolean
  /** The rendered prompt's cache block ends after this section. */
  readonly cacheBreakpoint?: boolean
  /** How long the rendered text is expected to stay the same (sets its cache block); default `'session'`. */
  readonly stability?: Stability
  /** Budget priority (finite, default 0): a token budget withholds the lowest first. */
  readonly priority?: number
}

/** One contribution of dynamic runtime context, rendered by the loop as a user-role snapshot. */
export interface PromptContext extends Pick<PromptSection, 'name' | 'order' | 'interpolate'> {
  /** Empty text contributes nothing. */
  readonly text: TextSource
  /** Survives `suppressRuntimeContext()`. */
  readonly required?: boolean
  /** Cache-stability hint for the step surface's lint. */
  readonly stability?: Stability
}

/** A prompt variable's value source; `undefined` means "no value this assembly". */
export type VariableSource = string | ReadonlySignal<string | undefined> | ((context: AssembleContext) => string | undefined)

/** Options of `systemPrompt.variable()`. */
export interface VariableOptions {
  /** Cache-stability hint: a `volatile` variable referenced from a section is linted. */
  readonly stability?: Stability
}

/** One model-facing tool declaration. */
export interface ToolSchema {
  /** Unique across all providers of an assembly. */
  readonly name: string
  readonly description: string
  /** A JSON schema object for the tool's arguments. */
  readonly parameters: Readonly<Record<string, unknown>>
}

/** What a tool provider contributes to one assembly. */
export interface ToolProviderResult {
  /** The schemas visible in this assembly. */
  readonly schemas: readonly ToolSchema[]
  /** The pre-restriction name universe checked against `toolOrder` (default: the schema names). */
  readonly knownNames?: readonly string[]
}

/** The exact Cordis effect disposer a registration returns: call or `await` it, never chain `.then` (it returns `undefined`). */
export type RegistrationDisposer = () => Promise<void> | undefined

/** A tool provider: evaluated on every assembly, or a signal of its result. */
export type ToolProvider = ((context: AssembleContext) => ToolProviderResult) | ReadonlySignal<ToolProviderResult>

/** One resolved section in a presentation. Fresh and mutable per assembly. */
export interface AssembledSection {
  name: string
  /** Set on every registry section; a listener may omit it, and its sections keep the order returned. */
  order?: number
  /** The resolved text before variable interpolation. */
  text: string
  /** `false` keeps the text literal when rendering. */
  interpolate?: boolean
  /** Present (and `true`) on a complete section. */
  complete?: boolean
}

/** One resolved runtime-context contribution. Fresh and mutable per assembly. */
export interface AssembledContext extends Pick<AssembledSection, 'name' | 'text' | 'interpolate'> {
  /** `true` on a registry context (which `refreshContext` re-reads or drops), absent on one a listener added. */
  registered?: true
}

/** Resolved variables and runtime contexts: the output of `prepare()`. */
export interface PromptPreparation {
  /** Every effective variable's value this assembly (`undefined`: no value). */
  variables: Record<string, string | undefined>
  /** Effective runtime contexts, sorted by order then name (required ones only when suppressed). */
  contexts: AssembledContext[]
}

/** What the `system-prompt/assemble` waterfall may rewrite: the preparation and the sections. */
export interface PromptPresentation extends PromptPreparation {
  /** Effective sections, sorted by order then name (only the complete section when there is one). */
  sections: AssembledSection[]
}

/** The full result of `assemble()`: the presentation plus the provider-owned tools. */
export interface PromptAssembly extends PromptPresentation {
  /** Detached, deep-frozen tool declarations in `toolOrder` order. */
  tools: ToolSchema[]
}

/** Cumulative counters that prove the memoization (see `SystemPrompt.stats()`), all zero when the service loads. */
export interface PromptStats {
  /** `assemble()` calls. */
  assemblies: number
  /** Merges of a scope's own entries of one kind into its parent's view; a scope without entries of a kind counts nothing. */
  structureRecomputes: number
  /** Calls of function providers (texts, variables, tools). */
  providerEvaluations: number
  /** Sections and contexts whose rendered text was computed (scanned or re-substituted). */
  sectionRenders: number
  /** Sections and contexts whose rendered text was reused unchanged. */
  renderCacheHits: number
  /** Detached copies made of tool schemas. */
  toolClones: number
  /** `system-prompt/change` events emitted. */
  changeEvents: number
}
