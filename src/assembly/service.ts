import { Context, Service } from 'cordis'
import { ownedEffect } from '../signals/tracked.js'
import { SCOPE_TAG, type ScopeKey, type Scoped } from '../scope/scope-key.js'
import { resolveSystemPromptConfig, SystemPromptConfigSchema, type SystemPromptConfig } from './config.js'
import { cordisBridgeOf, lightenTracker, releaseOnDispose } from './cordis-internals.js'
import { Pipeline } from './pipeline.js'
import { toContextEntry, toSectionEntry, toToolEntry, toVariableEntry, type PromptLayer } from './entries.js'
import type { DiagnosticsOptions, PromptDiagnostic } from './diagnostics.js'
import { inspectView, type PromptInspection } from './view.js'
import { CONTEXT_ORDERS, HARNESS_IDENTITY_SECTION, orderOf, PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION, SECTION_ORDERS } from './orders.js'
import type { PromptContextOrderName, PromptSectionOrderName } from './orders.js'
import type { AssembleContext, PromptAssembly, PromptContext, PromptPreparation, PromptPresentation } from './types.js'
import type { PromptSection, PromptStats, RegistrationDisposer, ToolProvider, VariableOptions, VariableSource } from './types.js'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }

  interface Events {
    /** Preparation waterfall over resolved variables and runtime contexts; scoped listeners hear their scope and its descendants. */
    'system-prompt/prepare'(
      this: Scoped<SystemPrompt>,
      preparation: PromptPreparation,
      context: AssembleContext,
      next: () => Promise<PromptPreparation>,
    ): Promise<PromptPreparation>
    /** Presentation waterfall, scope-filtered; its result is authoritative except for tools and required or complete sections. */
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

/** The context `assembleContextFor` builds: the agent is both the scope key and `context.agent`. */
export interface AgentAssembleContext<A extends ScopeKey = ScopeKey> extends AssembleContext {
  /** The agent the assembly is for, typed as the caller passed it. */
  agent: A
  /** The same object as `agent`: the agent is its own scope key. */
  scope: A
  signal: AbortSignal | undefined
}

/** A fresh assemble context `{ agent, scope: agent, signal }`: the agent is the scope key, and plugins read `context.agent`. */
export function assembleContextFor<A extends ScopeKey>(agent: A, signal?: AbortSignal): AgentAssembleContext<A> {
  return { agent, scope: agent, signal }
}

/** Where the service keeps its engine; a symbol, because `this` in a method is Cordis' proxy. */
const ENGINE: unique symbol = Symbol('promptloom.engine')

const suppress = (layer: PromptLayer) => layer.suppressors.append(true)

/**
 * The `systemPrompt` service: the registry of prompt sections, runtime contexts, tool providers and
 * variables, and the memoized assembly over them. A registration through a scoped context registers
 * into that scope's layer, is owned by the caller's fiber and returns the exact Cordis disposer.
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
  readonly [ENGINE]: Pipeline

  constructor(ctx: Context, config: SystemPromptConfig = {}) {
    super(ctx, 'systemPrompt')
    const resolved = resolveSystemPromptConfig(config)
    if (resolved.issues) throw new TypeError(`invalid config:\n${resolved.issues.map((i) => `  - ${i.message}`).join('\n')}`)
    const { value } = resolved
    const bridge = cordisBridgeOf(ctx)
    lightenTracker(ctx, bridge, this, 'systemPrompt')
    const engine = (this[ENGINE] = new Pipeline(value, bridge, this))
    // The configured sections live in the global layer even when the service was loaded under a scope.
    const global = ctx.extend({ [SCOPE_TAG]: undefined })
    const configured = (name: string, order: number, text: string): void => {
      const make = () => toSectionEntry({ name, order, text }, undefined)
      engine.register(global, 'systemPrompt config section', make, (layer, entry) => layer.sections.insert(name, entry))
    }
    if (value.includeHarnessIdentity) configured(HARNESS_IDENTITY_SECTION, SECTION_ORDERS.HARNESS_IDENTITY, value.identity)
    configured(PERSONA_PREFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, value.personaPrefix)
    configured(PERSONA_SUFFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX, value.personaSuffix)
    if (!value.includeRuntimeContext) engine.register(global, 'systemPrompt config suppressor', () => ({}), suppress)
    ownedEffect(ctx, engine.changeEffect((error) => ctx.logger('system-prompt').warn(error)), 'systemPrompt change effect')
    ctx.effect(() => () => engine.close(), 'systemPrompt close')
    // A disposed scope keeps nothing here, even while its key lives on.
    releaseOnDispose(ctx, bridge, (key) => engine.views.release(key))
  }

  /**
   * Registers an ordered section in the caller's scope, shadowing a same-named global or ancestor one.
   * Throws a `TypeError` for a bad name, order or text, and an `Error` for a duplicate name in the
   * same layer ("already registered") or a disposed service.
   */
  section(section: PromptSection): RegistrationDisposer {
    const make = (scope: ScopeKey | undefined) => toSectionEntry(section, scope)
    return this[ENGINE].register(this.ctx, 'systemPrompt.section()', make, (layer, e) => layer.sections.insert(e.name, e))
  }

  /** Registers runtime context in the caller's scope (a user-role snapshot); `required: true` survives suppression. Throws like `section()`. */
  context(context: PromptContext): RegistrationDisposer {
    const make = (scope: ScopeKey | undefined) => toContextEntry(context, scope)
    return this[ENGINE].register(this.ctx, 'systemPrompt.context()', make, (layer, e) => layer.contexts.insert(e.name, e))
  }

  /** Suppresses optional runtime contexts in the caller's scope and its descendants (globally when unscoped) until disposed. */
  suppressRuntimeContext(): RegistrationDisposer {
    return this[ENGINE].register(this.ctx, 'systemPrompt.suppressRuntimeContext()', () => ({}), suppress)
  }

  /** Registers a tool-schema provider (a function called on every assembly, or a signal) in the caller's scope; all along the chain contribute. */
  tools(provider: ToolProvider): RegistrationDisposer {
    const make = (scope: ScopeKey | undefined) => toToolEntry(provider, scope)
    return this[ENGINE].register(this.ctx, 'systemPrompt.tools()', make, (layer, entry) => layer.tools.append(entry))
  }

  /**
   * Registers the prompt variable `name` (`/^[a-z][a-z0-9_]*$/`, else "invalid prompt variable name")
   * in the caller's scope, shadowing globals. The provider may yield `undefined` (no value this assembly).
   */
  variable(name: string, provider: VariableSource, options: VariableOptions = {}): RegistrationDisposer {
    const make = (scope: ScopeKey | undefined) => toVariableEntry(name, provider, options?.stability, scope)
    return this[ENGINE].register(this.ctx, 'systemPrompt.variable()', make, (layer, e) => layer.variables.insert(e.name, e))
  }

  /** The order of a built-in or config `sectionOrders` band; a `TypeError` listing the known names for any other. */
  getSectionOrder(name: PromptSectionOrderName | (string & {})): number {
    return orderOf('section', name, SECTION_ORDERS, this[ENGINE].config.sectionOrders)
  }

  /** The order of a built-in or config `contextOrders` band; a `TypeError` listing the known names for any other. */
  getContextOrder(name: PromptContextOrderName | (string & {})): number {
    return orderOf('context', name, CONTEXT_ORDERS, this[ENGINE].config.contextOrders)
  }

  /**
   * Resolves the variables and (unless suppressed) runtime contexts of `context.scope`, then runs the
   * `system-prompt/prepare` waterfall. Rejects with `signal.reason` when aborted before or after the
   * waterfall, with a throwing provider's or listener's error, and once the service is disposed.
   */
  prepare(context: AssembleContext = {}): Promise<PromptPreparation> {
    return this[ENGINE].prepare(context)
  }

  /**
   * Assembles sections, contexts, variables and tools for `context.scope` (preparing first without a
   * `preparation`) and runs the `system-prompt/assemble` waterfall. Returns a fresh, mutable result;
   * tools are detached, deep-frozen copies. Rejects like `prepare`, also after either waterfall.
   *
   * @example
   * ```ts
   * // Before every model step of the agent whose scope key is `agent`:
   * const assembly = await app.systemPrompt.assemble({ scope: agent })
   * console.log(assembly.sections.map((section) => section.name), assembly.tools.map((tool) => tool.name))
   * ```
   */
  assemble(context: AssembleContext = {}, preparation?: PromptPreparation): Promise<PromptAssembly> {
    return this[ENGINE].assemble(context, preparation)
  }

  /**
   * A copy of `accepted` with its runtime contexts re-read from their current registrations: gone ones
   * dropped, listener-added ones kept, suppression applied, missing required ones appended. Works on
   * copies too; throws an `Error` once the service is disposed, or naming both scopes for another scope's result.
   */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext = {}): T {
    return this[ENGINE].refreshContext(accepted, context)
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
   * calling a provider: malformed references, unknown or valueless variables and stability hazards in
   * string and signal texts. The same frozen array until the findings change; `includeUnchecked` adds
   * an `'unchecked'` entry per function text.
   */
  diagnostics(scope?: ScopeKey, options?: DiagnosticsOptions): readonly PromptDiagnostic[] {
    const engine = this[ENGINE]
    return engine.diagnostics.of(engine.views.view(scope), options)
  }
}

export default SystemPrompt
