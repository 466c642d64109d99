import { Context, Service } from 'cordis'
import { ownedEffect } from '../signals/owned-effect.js'
import { scopeKeyOfFiber } from '../scope/create-scope.js'
import { SCOPE_TAG, scopeOf, type ScopeKey, type Scoped } from '../scope/scope-key.js'
import {
  resolveSystemPromptConfig,
  SystemPromptConfigSchema,
  type ResolvedSystemPromptConfig,
  type SystemPromptConfig,
} from './config.js'
import { PromptEngine, type EventDispatcher } from './engine.js'
import { hasListeners } from './listeners.js'
import { lightenTracker } from './tracker.js'
import { toContextEntry, toSectionEntry, toToolEntry, toVariableEntry } from './entries.js'
import { diagnosticsOf, type DiagnosticsOptions, type PromptDiagnostic } from './diagnostics.js'
import { inspectView, type PromptInspection } from './inspect.js'
import {
  CONTEXT_ORDERS,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  SECTION_ORDERS,
  type PromptContextOrderName,
  type PromptSectionOrderName,
} from './orders.js'
import type { PromptStats } from './stats.js'
import type {
  AssembleContext,
  PromptAssembly,
  PromptContext,
  PromptPreparation,
  PromptPresentation,
  PromptSection,
  RegistrationDisposer,
  ToolProvider,
  VariableOptions,
  VariableSource,
} from './types.js'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }

  interface Events {
    /**
     * Preparation waterfall over resolved variables and runtime contexts,
     * before a step is accepted. Scope-filtered: scoped listeners hear only
     * their scope and its descendants.
     */
    'system-prompt/prepare'(
      this: Scoped<SystemPrompt>,
      preparation: PromptPreparation,
      context: AssembleContext,
      next: () => Promise<PromptPreparation>,
    ): Promise<PromptPreparation>
    /**
     * Presentation waterfall over assembled sections, contexts and variables.
     * Scope-filtered. Its result is authoritative except for tools (provider
     * owned) and a complete section (restored afterwards).
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

/** Settles once `fiber` finished unloading (its `inertia` chain is empty); never rejects. */
async function torndown(fiber: { readonly inertia: Promise<void> | undefined }): Promise<void> {
  // The unload starts right after the disposal is reported, in the same job.
  await undefined
  while (fiber.inertia) await fiber.inertia.catch(() => undefined)
}

/** Where the service keeps its engine; a symbol, because `this` in a method is Cordis' proxy. */
const ENGINE: unique symbol = Symbol('promptloom.engine')
const CHANGE = 'system-prompt/change'
/** The validated config (order tables); a symbol for the same reason. */
const CONFIG: unique symbol = Symbol('promptloom.config')
const ORIGINAL = Symbol.for('cordis.original')

/** Engines whose service was unloaded: a registration through one would land in a dead registry. */
const disposed = new WeakSet<PromptEngine>()

/** The engine of `service`, for a registration; throws once the service's plugin was disposed. */
function liveEngine(service: SystemPrompt, method: string): PromptEngine {
  const engine = service[ENGINE]
  if (!disposed.has(engine)) return engine
  throw new Error(
    `systemPrompt.${method}() cannot register: this "systemPrompt" service is disposed; its plugin was unloaded, so register through the ctx.systemPrompt of a loaded SystemPrompt plugin`,
  )
}

/** A band's order: a built-in one, else a configured one; a `TypeError` listing both for any other name. */
function orderOf(
  kind: 'section' | 'context',
  name: string,
  builtIn: Readonly<Record<string, number>>,
  configured: Readonly<Record<string, number>>,
): number {
  if (Object.hasOwn(builtIn, name)) return builtIn[name]!
  if (Object.hasOwn(configured, name)) return configured[name]!
  const known = [...Object.keys(builtIn), ...Object.keys(configured)].join(', ')
  throw new TypeError(`unknown ${kind} order "${String(name)}"; known: ${known}`)
}

/**
 * The `systemPrompt` service: the registry of prompt sections, runtime
 * contexts, tool providers and variables, and the memoized assembly over them.
 *
 * A registration method called through a scoped context (`scope.ctx`, or a
 * plugin loaded under it) registers into that scope's layer and is owned by
 * the caller's fiber; each returns the exact Cordis effect disposer.
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
  readonly [ENGINE]: PromptEngine
  /** @internal */
  readonly [CONFIG]: ResolvedSystemPromptConfig

  constructor(ctx: Context, config: SystemPromptConfig = {}) {
    super(ctx, 'systemPrompt')
    // Methods are handed out unshadowed and without an associated-property
    // lookup unless one is declared (see tracker.ts for the Cordis contract).
    const reflect = (ctx.reflect as unknown as Record<symbol, { readonly props: object }>)[ORIGINAL]!
    lightenTracker(this, Service.tracker, 'systemPrompt', reflect.props)
    const resolved = resolveSystemPromptConfig(config)
    if (resolved.issues) throw new TypeError(`invalid config:\n${resolved.issues.map((i) => `  - ${i.message}`).join('\n')}`)
    const { value } = resolved
    this[CONFIG] = value
    const events = (ctx.events as unknown as Record<symbol, EventDispatcher>)[ORIGINAL]!
    const engine = (this[ENGINE] = new PromptEngine(value, events, this))
    // The configured sections live in the global layer even when the service
    // itself was loaded under a scope.
    const global = ctx.extend({ [SCOPE_TAG]: undefined })
    const configured = (name: string, order: number, text: string): void => {
      const entry = toSectionEntry({ name, order, text }, undefined)
      engine.register(global, 'systemPrompt config section', undefined, (layer) => layer.sections.insert(name, entry))
    }
    if (value.includeHarnessIdentity) configured(HARNESS_IDENTITY_SECTION, SECTION_ORDERS.HARNESS_IDENTITY, value.identity)
    configured(PERSONA_PREFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, value.personaPrefix)
    configured(PERSONA_SUFFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX, value.personaSuffix)
    if (!value.includeRuntimeContext) {
      engine.register(global, 'systemPrompt config suppressor', undefined, (layer) => layer.suppressors.append(true))
    }
    // Like `ctx.emit`, but one throwing listener neither reaches the writer of
    // the change nor keeps the listeners after it from hearing the event; with
    // nobody listening (nor observing dispatches) there is nothing to resolve.
    const emit = (): void => {
      if (!hasListeners(events, CHANGE)) return
      for (const listener of events.dispatch('emit', [CHANGE])) {
        try {
          listener()
        } catch (error) {
          ctx.logger('system-prompt').warn(error)
        }
      }
    }
    ownedEffect(ctx, engine.changeEffect(emit), 'systemPrompt change effect')
    ctx.effect(
      () => () => {
        disposed.add(engine)
        engine.close()
      },
      'systemPrompt parent watch',
    )
    // A disposed scope keeps nothing here, even while its key lives on. Cordis
    // reports the disposal before it undoes the scope's registrations (one
    // microtask at a time, each emitting a change), so a change listener that
    // re-assembles the scope meanwhile builds a fresh view: release it again
    // once the fiber's teardown has settled.
    ctx.on('internal/plugin', (fiber) => {
      if (fiber.uid !== null) return
      const key = scopeKeyOfFiber(fiber)
      if (key === undefined) return
      engine.release(key)
      void torndown(fiber).then(() => engine.release(key))
    })
  }

  /**
   * Registers an ordered system-prompt section in the caller's scope. A scoped
   * section shadows a same-named global or ancestor section in that scope's
   * assemblies. Throws a `TypeError` for a bad name, a non-finite order or a
   * text that is not a string, signal or function, and an `Error` ("already
   * registered") for a duplicate name in the same layer, or when the service
   * is disposed.
   */
  section(section: PromptSection): RegistrationDisposer {
    const engine = liveEngine(this, 'section')
    const ctx = this.ctx
    const entry = toSectionEntry(section, scopeOf(ctx))
    return engine.register(ctx, 'systemPrompt.section()', entry.signal, (layer) =>
      layer.sections.insert(entry.name, entry),
    )
  }

  /**
   * Registers dynamic runtime context in the caller's scope, rendered by the
   * loop as a user-role snapshot. `required: true` survives suppression.
   * Validated like `section()`.
   */
  context(context: PromptContext): RegistrationDisposer {
    const engine = liveEngine(this, 'context')
    const ctx = this.ctx
    const entry = toContextEntry(context, scopeOf(ctx))
    return engine.register(ctx, 'systemPrompt.context()', entry.signal, (layer) =>
      layer.contexts.insert(entry.name, entry),
    )
  }

  /**
   * Suppresses optional runtime contexts in the caller's scope and its
   * descendants (globally when unscoped) while the returned disposer lives.
   * Suppressors are independent of each other.
   */
  suppressRuntimeContext(): RegistrationDisposer {
    return liveEngine(this, 'suppressRuntimeContext').register(this.ctx, 'systemPrompt.suppressRuntimeContext()', undefined, (layer) =>
      layer.suppressors.append(true),
    )
  }

  /**
   * Registers a tool-schema provider in the caller's scope: a function
   * evaluated on every assembly, or a signal of its result. Global and chain
   * providers all contribute.
   */
  tools(provider: ToolProvider): RegistrationDisposer {
    const engine = liveEngine(this, 'tools')
    const ctx = this.ctx
    const entry = toToolEntry(provider, scopeOf(ctx))
    return engine.register(ctx, 'systemPrompt.tools()', entry.signal, (layer) => layer.tools.append(entry))
  }

  /**
   * Registers the prompt variable `name` (`/^[a-z][a-z0-9_]*$/`, else
   * "invalid prompt variable name") in the caller's scope; scoped values shadow
   * globals. The provider may yield `undefined` ("no value this assembly").
   */
  variable(name: string, provider: VariableSource, options: VariableOptions = {}): RegistrationDisposer {
    const engine = liveEngine(this, 'variable')
    const ctx = this.ctx
    const entry = toVariableEntry(name, provider, options?.stability, scopeOf(ctx))
    return engine.register(ctx, 'systemPrompt.variable()', entry.signal, (layer) =>
      layer.variables.insert(entry.name, entry),
    )
  }

  /**
   * The numeric order of a section band: a built-in `PromptSectionOrderName`
   * or a name from config `sectionOrders`. Throws a `TypeError` listing the
   * known names for any other.
   */
  getSectionOrder(name: PromptSectionOrderName | (string & {})): number {
    return orderOf('section', name, SECTION_ORDERS, this[CONFIG].sectionOrders)
  }

  /**
   * The numeric order of a runtime-context band: a built-in
   * `PromptContextOrderName` or a name from config `contextOrders`. Throws a
   * `TypeError` listing the known names for any other.
   */
  getContextOrder(name: PromptContextOrderName | (string & {})): number {
    return orderOf('context', name, CONTEXT_ORDERS, this[CONFIG].contextOrders)
  }

  /**
   * Resolves every effective variable and (unless suppressed) runtime context
   * of `context.scope`, then runs the scope-filtered `system-prompt/prepare`
   * waterfall. Reads no section and no tool. Rejects with `signal.reason` when
   * the signal is aborted before or after the waterfall, and with the error of
   * a provider or listener that throws.
   */
  prepare(context: AssembleContext = {}): Promise<PromptPreparation> {
    return this[ENGINE].prepare(context)
  }

  /**
   * Assembles sections, contexts, variables and tools for `context.scope`
   * (preparing first when no `preparation` is given) and runs the
   * scope-filtered `system-prompt/assemble` waterfall. Every call returns a
   * fresh, mutable result; tools are detached, deep-frozen copies.
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
   * Returns a copy of `accepted` whose runtime contexts are re-read from their
   * current registrations: gone registrations are dropped, listener-added ones
   * keep their text, suppression applies, and missing required registrations
   * are appended in registry order. Never mutates `accepted`. Works on a
   * refreshed result and on copies (spread, `structuredClone`, JSON); throws
   * an `Error` naming both scopes when `accepted` is known to be for another
   * scope than `context.scope`.
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
    return inspectView(this[ENGINE].view(scope))
  }

  /**
   * The render errors `scope`'s registry would meet (the global view without
   * one), found without calling any provider: malformed references, unknown
   * variables, variables whose static or signal value is `undefined`, and
   * stability-guard hazards, over every effective section and unsuppressed
   * context with a string or signal text (SPEC §5). Memoized: the same frozen
   * array until a change alters the findings. `includeUnchecked` adds one
   * `'unchecked'` entry per function text.
   */
  diagnostics(scope?: ScopeKey, options?: DiagnosticsOptions): readonly PromptDiagnostic[] {
    return diagnosticsOf(this[ENGINE].view(scope), this[CONFIG].stabilityGuard, options)
  }
}

export default SystemPrompt
