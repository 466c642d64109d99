import { Context, Service } from 'cordis'
import { ownedEffect } from '../signals/owned-effect.js'
import { scopeKeyOfFiber } from '../scope/create-scope.js'
import { SCOPE_TAG, scopeOf, type ScopeKey, type Scoped } from '../scope/scope-key.js'
import { resolveSystemPromptConfig, SystemPromptConfigSchema, type ResolvedSystemPromptConfig, type SystemPromptConfig } from './config.js'
import { cordisBridgeOf, lightenTracker, releaseOnDispose } from './cordis-internals.js'
import { Evaluation } from './evaluation.js'
import { Pipeline } from './pipeline.js'
import { Registration } from './registration.js'
import { ViewCache } from './view-cache.js'
import { toContextEntry, toSectionEntry, toToolEntry, toVariableEntry } from './entries.js'
import { Diagnostics, type DiagnosticsOptions, type PromptDiagnostic } from './diagnostics.js'
import { inspectView, type PromptInspection } from './inspect.js'
import { CONTEXT_ORDERS, HARNESS_IDENTITY_SECTION, orderOf, PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION, SECTION_ORDERS } from './orders.js'
import type { PromptContextOrderName, PromptSectionOrderName } from './orders.js'
import { createStats, type PromptStats } from './stats.js'
import type { AssembleContext, PromptAssembly, PromptContext, PromptPreparation, PromptPresentation } from './types.js'
import type { PromptSection, RegistrationDisposer, ToolProvider, VariableOptions, VariableSource } from './types.js'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }

  interface Events {
    /**
     * Preparation waterfall over resolved variables and runtime contexts, before a step is accepted.
     * Scope-filtered: scoped listeners hear only their scope and its descendants.
     */
    'system-prompt/prepare'(
      this: Scoped<SystemPrompt>,
      preparation: PromptPreparation,
      context: AssembleContext,
      next: () => Promise<PromptPreparation>,
    ): Promise<PromptPreparation>
    /**
     * Presentation waterfall over assembled sections, contexts and variables. Scope-filtered. Its
     * result is authoritative except for tools (provider owned) and a complete section (restored
     * afterwards).
     */
    'system-prompt/assemble'(
      this: Scoped<SystemPrompt>,
      presentation: PromptPresentation,
      context: AssembleContext,
      next: () => Promise<PromptPresentation>,
    ): Promise<PromptPresentation>
    /** Emitted (unfiltered, synchronously) after every effective registry change, once per `batch()`. */
    'system-prompt/change'(): void
  }
}

const CHANGE = 'system-prompt/change'

/**
 * A service's registry and its memoized assembly, free of Cordis' proxies: methods read it once per
 * call, and everything below is plain objects and signals.
 *
 *     Registration ──▶ store ──▶ ViewCache (views, per-view step caches)
 *                                    ▲
 *     Pipeline (prepare / assemble / refresh) ──▶ Evaluation (provider reads)
 */
export interface Engine {
  readonly config: ResolvedSystemPromptConfig
  readonly stats: PromptStats
  readonly registration: Registration
  readonly views: ViewCache
  readonly pipeline: Pipeline
  readonly diagnostics: Diagnostics
  /** Set when the service's plugin unloads: a registration then would land in a dead registry. */
  closed: boolean
}

/** Where the service keeps its engine; a symbol, because `this` in a method is Cordis' proxy. */
const ENGINE: unique symbol = Symbol('promptloom.engine')

/** The registration of `service`, for method `method`; throws once the service's plugin was disposed. */
function liveRegistration(service: SystemPrompt, method: string): Registration {
  const engine = service[ENGINE]
  if (!engine.closed) return engine.registration
  throw new Error(
    `systemPrompt.${method}() cannot register: this "systemPrompt" service is disposed; its plugin was unloaded, so register through the ctx.systemPrompt of a loaded SystemPrompt plugin`,
  )
}

/**
 * The `systemPrompt` service: the registry of prompt sections, runtime contexts, tool providers and
 * variables, and the memoized assembly over them.
 *
 * A registration method called through a scoped context (`scope.ctx`, or a plugin loaded under it)
 * registers into that scope's layer and is owned by the caller's fiber; each returns the exact Cordis
 * effect disposer.
 *
 * @example
 * ```ts
 * import { Context } from 'cordis'
 * import { renderPrompt, SECTION_ORDERS, SystemPrompt } from 'promptloom'
 *
 * const app = new Context()
 * await app.plugin(SystemPrompt, { personaPrefix: 'You work for {{team}}.' })
 * app.systemPrompt.variable('team', 'the platform team')
 * app.systemPrompt.section({ name: 'plan', order: SECTION_ORDERS.PLAN_POLICY, text: 'Plan before you edit.' })
 * console.log(renderPrompt(await app.systemPrompt.assemble()))
 * ```
 */
export class SystemPrompt extends Service {
  /** Cordis runs this Standard Schema before construction: bad config fails at load. */
  static readonly Config = SystemPromptConfigSchema

  /** @internal */
  readonly [ENGINE]: Engine

  constructor(ctx: Context, config: SystemPromptConfig = {}) {
    super(ctx, 'systemPrompt')
    const resolved = resolveSystemPromptConfig(config)
    if (resolved.issues) throw new TypeError(`invalid config:\n${resolved.issues.map((i) => `  - ${i.message}`).join('\n')}`)
    const { value } = resolved
    const bridge = cordisBridgeOf(ctx)
    lightenTracker(ctx, bridge, this, 'systemPrompt')
    const stats = createStats()
    const registration = new Registration(stats)
    const views = new ViewCache(registration.store, stats, this, value.renderCacheScopes)
    const pipeline = new Pipeline(stats, views, new Evaluation(stats, value, views), bridge, value.stabilityGuard)
    const engine: Engine = (this[ENGINE] = { config: value, stats, registration, views, pipeline, diagnostics: new Diagnostics(value.stabilityGuard), closed: false })
    // The configured sections live in the global layer even when the service
    // itself was loaded under a scope.
    const global = ctx.extend({ [SCOPE_TAG]: undefined })
    const configured = (name: string, order: number, text: string): void => {
      const entry = toSectionEntry({ name, order, text }, undefined)
      registration.register(global, 'systemPrompt config section', undefined, (layer) => layer.sections.insert(name, entry))
    }
    if (value.includeHarnessIdentity) configured(HARNESS_IDENTITY_SECTION, SECTION_ORDERS.HARNESS_IDENTITY, value.identity)
    configured(PERSONA_PREFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, value.personaPrefix)
    configured(PERSONA_SUFFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX, value.personaSuffix)
    if (!value.includeRuntimeContext) {
      registration.register(global, 'systemPrompt config suppressor', undefined, (layer) => layer.suppressors.append(true))
    }
    // One throwing listener neither reaches the writer of the change nor keeps the others from hearing it.
    const emit = (): void => {
      if (bridge.mayHear(CHANGE)) bridge.emit(CHANGE, (error) => ctx.logger('system-prompt').warn(error))
    }
    ownedEffect(ctx, registration.changeEffect(emit), 'systemPrompt change effect')
    ctx.effect(
      () => () => {
        engine.closed = true
        registration.close()
      },
      'systemPrompt parent watch',
    )
    // A disposed scope keeps nothing here, even while its key lives on.
    releaseOnDispose(ctx, bridge, scopeKeyOfFiber, (key) => views.release(key))
  }

  /**
   * Registers an ordered system-prompt section in the caller's scope. A scoped section shadows a
   * same-named global or ancestor section in that scope's assemblies. Throws a `TypeError` for a bad
   * name, a non-finite order or a text that is not a string, signal or function, and an `Error`
   * ("already registered") for a duplicate name in the same layer, or when the service is disposed.
   */
  section(section: PromptSection): RegistrationDisposer {
    const registration = liveRegistration(this, 'section')
    const ctx = this.ctx
    const entry = toSectionEntry(section, scopeOf(ctx))
    return registration.register(ctx, 'systemPrompt.section()', entry.signal, (layer) =>
      layer.sections.insert(entry.name, entry),
    )
  }

  /**
   * Registers dynamic runtime context in the caller's scope, rendered by the loop as a user-role
   * snapshot. `required: true` survives suppression. Validated like `section()`.
   */
  context(context: PromptContext): RegistrationDisposer {
    const registration = liveRegistration(this, 'context')
    const ctx = this.ctx
    const entry = toContextEntry(context, scopeOf(ctx))
    return registration.register(ctx, 'systemPrompt.context()', entry.signal, (layer) =>
      layer.contexts.insert(entry.name, entry),
    )
  }

  /**
   * Suppresses optional runtime contexts in the caller's scope and its descendants (globally when
   * unscoped) while the returned disposer lives. Suppressors are independent of each other.
   */
  suppressRuntimeContext(): RegistrationDisposer {
    return liveRegistration(this, 'suppressRuntimeContext').register(this.ctx, 'systemPrompt.suppressRuntimeContext()', undefined, (layer) =>
      layer.suppressors.append(true),
    )
  }

  /**
   * Registers a tool-schema provider in the caller's scope: a function evaluated on every assembly, or
   * a signal of its result. Global and chain providers all contribute.
   */
  tools(provider: ToolProvider): RegistrationDisposer {
    const registration = liveRegistration(this, 'tools')
    const ctx = this.ctx
    const entry = toToolEntry(provider, scopeOf(ctx))
    return registration.register(ctx, 'systemPrompt.tools()', entry.signal, (layer) => layer.tools.append(entry))
  }

  /**
   * Registers the prompt variable `name` (`/^[a-z][a-z0-9_]*$/`, else "invalid prompt variable name")
   * in the caller's scope; scoped values shadow globals. The provider may yield `undefined` ("no value
   * this assembly").
   */
  variable(name: string, provider: VariableSource, options: VariableOptions = {}): RegistrationDisposer {
    const registration = liveRegistration(this, 'variable')
    const ctx = this.ctx
    const entry = toVariableEntry(name, provider, options?.stability, scopeOf(ctx))
    return registration.register(ctx, 'systemPrompt.variable()', entry.signal, (layer) =>
      layer.variables.insert(entry.name, entry),
    )
  }

  /**
   * The numeric order of a section band: a built-in `PromptSectionOrderName` or a name from config
   * `sectionOrders`. Throws a `TypeError` listing the known names for any other.
   */
  getSectionOrder(name: PromptSectionOrderName | (string & {})): number {
    return orderOf('section', name, SECTION_ORDERS, this[ENGINE].config.sectionOrders)
  }

  /**
   * The numeric order of a runtime-context band: a built-in `PromptContextOrderName` or a name from
   * config `contextOrders`. Throws a `TypeError` listing the known names for any other.
   */
  getContextOrder(name: PromptContextOrderName | (string & {})): number {
    return orderOf('context', name, CONTEXT_ORDERS, this[ENGINE].config.contextOrders)
  }

  /**
   * Resolves every effective variable and (unless suppressed) runtime context of `context.scope`, then
   * runs the scope-filtered `system-prompt/prepare` waterfall. Reads no section and no tool. Rejects
   * with `signal.reason` when the signal is aborted before or after the waterfall, and with the error
   * of a provider or listener that throws.
   */
  prepare(context: AssembleContext = {}): Promise<PromptPreparation> {
    return this[ENGINE].pipeline.prepare(context)
  }

  /**
   * Assembles sections, contexts, variables and tools for `context.scope` (preparing first when no
   * `preparation` is given) and runs the scope-filtered `system-prompt/assemble` waterfall. Every call
   * returns a fresh, mutable result; tools are detached, deep-frozen copies.
   *
   * @example
   * ```ts
   * // Before every model step of the agent whose scope key is `agent`:
   * const assembly = await app.systemPrompt.assemble({ scope: agent })
   * console.log(assembly.sections.map((section) => section.name), assembly.tools.map((tool) => tool.name))
   * ```
   */
  assemble(context: AssembleContext = {}, preparation?: PromptPreparation): Promise<PromptAssembly> {
    return this[ENGINE].pipeline.assemble(context, preparation)
  }

  /**
   * Returns a copy of `accepted` whose runtime contexts are re-read from their current registrations:
   * gone registrations are dropped, listener-added ones keep their text, suppression applies, and
   * missing required registrations are appended in registry order. Never mutates `accepted`. Works on a
   * refreshed result and on copies (spread, `structuredClone`, JSON); throws an `Error` naming both
   * scopes when `accepted` is known to be for another scope than `context.scope`.
   */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext = {}): T {
    return this[ENGINE].pipeline.refreshContext(accepted, context)
  }

  /** A snapshot of the cumulative counters that prove the memoization. */
  stats(): PromptStats {
    return { ...this[ENGINE].stats }
  }

  /** The effective entries of `scope`'s view (the global view without one), with their layers. */
  inspect(scope?: ScopeKey): PromptInspection {
    return inspectView(this[ENGINE].views.view(scope))
  }

  /**
   * The render errors `scope`'s registry would meet (the global view without one), found without
   * calling any provider: malformed references, unknown variables, variables whose static or signal
   * value is `undefined`, and stability-guard hazards, over every effective section and unsuppressed
   * context with a string or signal text (SPEC §5). Memoized: the same frozen array until a change
   * alters the findings. `includeUnchecked` adds one `'unchecked'` entry per function text.
   */
  diagnostics(scope?: ScopeKey, options?: DiagnosticsOptions): readonly PromptDiagnostic[] {
    const engine = this[ENGINE]
    return engine.diagnostics.of(engine.views.view(scope), options)
  }
}

export default SystemPrompt
