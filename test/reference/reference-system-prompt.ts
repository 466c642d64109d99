import { Service, type Context } from 'cordis'
import {
  CONTEXT_ORDERS,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  SECTION_ORDERS,
  type PromptContextOrderName,
  type PromptSectionOrderName,
} from '../../src/assembly/orders.js'
import type {
  AssembleContext,
  AssembledContext,
  AssembledSection,
  PromptAssembly,
  PromptContext,
  PromptPreparation,
  PromptPresentation,
  PromptSection,
  ToolProvider,
  VariableOptions,
  VariableSource,
} from '../../src/assembly/types.js'
import { scopeTarget } from '../../src/scope/carrier.js'
import { scopeOf, type ScopeKey } from '../../src/scope/scope-key.js'
import '../../src/assembly/service.js'
import {
  byOrderThenName,
  describe,
  evaluateSource,
  isSignalLike,
  isSource,
  ReferenceLayers,
  type ContextEntry,
  type ReferenceLayer,
  type SectionEntry,
} from './layers.js'
import { resolveReferenceConfig, type ReferenceSystemPromptConfig } from './config.js'
import { referenceCollectTools } from './tools.js'
import { restoreRequiredPlainly } from './required.js'

declare module 'cordis' {
  interface Context {
    referencePrompt: ReferenceSystemPrompt
  }
}

const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/

// The context names of an accepted preparation/assembly that came from
// registrations (before any waterfall), so `refreshContext` can tell a
// since-disposed registration (drop) from a listener's addition (keep).
const registeredContexts = new WeakMap<object, ReadonlySet<string>>()
const NONE: ReadonlySet<string> = new Set()

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

function validateEntry(kind: 'section' | 'context', entry: PromptSection | PromptContext): void {
  if (!isObject(entry)) throw new TypeError(`prompt ${kind} must be an object (got ${describe(entry)})`)
  if (typeof entry.name !== 'string') {
    throw new TypeError(`prompt ${kind} name must be a string (got ${describe(entry.name)})`)
  }
  if (typeof entry.order !== 'number' || !Number.isFinite(entry.order)) {
    throw new TypeError(
      `prompt ${kind} "${entry.name}" order must be a finite number (got ${String(entry.order)})`,
    )
  }
  if (!isSource(entry.text)) {
    throw new TypeError(
      `prompt ${kind} "${entry.name}" text must be a string, a signal or a function (got ${describe(entry.text)})`,
    )
  }
}

/** Inserts `value` under `name`; the undo removes exactly this insertion. */
function insertNamed<V>(map: Map<string, V>, name: string, value: V, duplicate: () => Error): () => void {
  if (map.has(name)) throw duplicate()
  map.set(name, value)
  return () => {
    if (map.get(name) === value) map.delete(name)
  }
}

function layerLabel(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'the global layer' : 'this scope'
}

/**
 * The ORACLE for the production `SystemPrompt`: the same contract (SPEC §2),
 * implemented the plain way. Registrations go into plain per-scope Maps, and
 * every `prepare`/`assemble`/`refreshContext` call recomputes everything from
 * scratch: merge the layers, call every effective provider, sort, clone.
 * Provides `ctx.referencePrompt`.
 */
export class ReferenceSystemPrompt extends Service {
  // TS-private, not `#`: Cordis hands methods a proxy of the instance as `this`.
  private readonly layers = new ReferenceLayers()
  private readonly toolOrder: readonly string[] | undefined
  private readonly emitChanges: boolean

  /** Validates `config` (throws `TypeError` at load) and registers the configured global sections. */
  constructor(ctx: Context, config: ReferenceSystemPromptConfig = {}) {
    const resolved = resolveReferenceConfig(config)
    super(ctx, 'referencePrompt')
    this.toolOrder = resolved.toolOrder
    this.emitChanges = resolved.emitChanges
    const global = this.layers.global
    const configSection = (name: string, order: number, text: string): void => {
      const entry: SectionEntry = { name, order, text, interpolate: true, complete: false, required: false }
      ctx.effect(
        () => insertNamed(global.sections, name, entry, () => new Error(`prompt section "${name}" is already registered`)),
        'referencePrompt.config',
      )
    }
    if (resolved.includeHarnessIdentity) {
      configSection(HARNESS_IDENTITY_SECTION, SECTION_ORDERS.HARNESS_IDENTITY, resolved.identity)
    }
    configSection(PERSONA_PREFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, resolved.personaPrefix)
    configSection(PERSONA_SUFFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX, resolved.personaSuffix)
    if (!resolved.includeRuntimeContext) {
      ctx.effect(() => {
        const token = {}
        global.suppressors.add(token)
        return () => void global.suppressors.delete(token)
      }, 'referencePrompt.config')
    }
  }

  // Runs `action` on the caller's exact layer inside an effect owned by the caller's fiber.
  private register(
    label: string,
    action: (layer: ReferenceLayer, scope: ScopeKey | undefined) => () => void,
  ): () => Promise<void> {
    const scope = scopeOf(this.ctx)
    if (!this.emitChanges) return this.ctx.effect(() => action(this.layers.layerOf(scope), scope), label)
    const root = this.ctx.root
    return this.ctx.effect(() => {
      const undo = action(this.layers.layerOf(scope), scope)
      root.emit('system-prompt/change')
      return () => {
        undo()
        root.emit('system-prompt/change')
      }
    }, label)
  }

  /** Registers a section in the caller's scope; returns the exact Cordis effect disposer. */
  section(section: PromptSection): () => Promise<void> {
    validateEntry('section', section)
    const entry: SectionEntry = {
      name: section.name,
      order: section.order,
      text: section.text,
      interpolate: section.interpolate !== false,
      complete: section.complete === true,
      required: section.required === true,
    }
    return this.register('referencePrompt.section()', (layer, scope) =>
      insertNamed(layer.sections, entry.name, entry, () => {
        return new Error(`prompt section "${entry.name}" is already registered in ${layerLabel(scope)}`)
      }),
    )
  }

  /** Registers a runtime context in the caller's scope; returns the exact Cordis effect disposer. */
  context(context: PromptContext): () => Promise<void> {
    validateEntry('context', context)
    const entry: ContextEntry = {
      name: context.name,
      order: context.order,
      text: context.text,
      interpolate: context.interpolate !== false,
      required: context.required === true,
    }
    return this.register('referencePrompt.context()', (layer, scope) =>
      insertNamed(layer.contexts, entry.name, entry, () => {
        return new Error(`prompt context "${entry.name}" is already registered in ${layerLabel(scope)}`)
      }),
    )
  }

  /** Suppresses optional runtime contexts in the caller's scope (and its descendants) while it lives. */
  suppressRuntimeContext(): () => Promise<void> {
    return this.register('referencePrompt.suppressRuntimeContext()', (layer) => {
      const token = {}
      layer.suppressors.add(token)
      return () => void layer.suppressors.delete(token)
    })
  }

  /** Registers a tool provider in the caller's scope; returns the exact Cordis effect disposer. */
  tools(provider: ToolProvider): () => Promise<void> {
    if (typeof provider !== 'function' && !isSignalLike(provider)) {
      throw new TypeError(`tool provider must be a function or a signal (got ${describe(provider)})`)
    }
    return this.register('referencePrompt.tools()', (layer) => {
      const entry = { provider }
      layer.tools.add(entry)
      return () => void layer.tools.delete(entry)
    })
  }

  /** Registers a prompt variable in the caller's scope; returns the exact Cordis effect disposer. */
  variable(name: string, provider: VariableSource, options?: VariableOptions): () => Promise<void> {
    void options // stability only matters to the step surface's lint
    if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
      throw new TypeError(`invalid prompt variable name "${String(name)}"; names match /^[a-z][a-z0-9_]*$/`)
    }
    if (!isSource(provider)) {
      throw new TypeError(
        `prompt variable "${name}" value must be a string, a signal or a function (got ${describe(provider)})`,
      )
    }
    const entry = { name, value: provider }
    return this.register('referencePrompt.variable()', (layer, scope) =>
      insertNamed(layer.variables, name, entry, () => {
        return new Error(`prompt variable "${name}" is already registered in ${layerLabel(scope)}`)
      }),
    )
  }

  /** The order of a named section placement (`SECTION_ORDERS`). */
  getSectionOrder(name: PromptSectionOrderName): number {
    if (!Object.hasOwn(SECTION_ORDERS, name)) {
      throw new TypeError(`unknown prompt section order "${name}"; known: ${Object.keys(SECTION_ORDERS).join(', ')}`)
    }
    return SECTION_ORDERS[name]
  }

  /** The order of a named runtime-context placement (`CONTEXT_ORDERS`). */
  getContextOrder(name: PromptContextOrderName): number {
    if (!Object.hasOwn(CONTEXT_ORDERS, name)) {
      throw new TypeError(`unknown prompt context order "${name}"; known: ${Object.keys(CONTEXT_ORDERS).join(', ')}`)
    }
    return CONTEXT_ORDERS[name]
  }

  /**
   * Resolves every effective variable and (unless suppressed, then only the
   * required ones) every effective context, then runs the scope-filtered
   * `system-prompt/prepare` waterfall. Rejects with `signal.reason` when
   * aborted before or after the waterfall.
   */
  async prepare(context: AssembleContext = {}): Promise<PromptPreparation> {
    throwIfAborted(context.signal)
    const { scope } = context
    const variables = this.resolveVariables(context)
    const suppressed = this.layers.isSuppressed(scope)
    const contexts = this.sortedContexts(scope)
      .filter((entry) => !suppressed || entry.required)
      .map((entry) => this.resolveContext(entry, context))
    const registered = new Set(contexts.map((item) => item.name))
    const result = await this.dispatch('system-prompt/prepare', { variables, contexts }, context)
    if (!isObject(result)) throw new Error('system-prompt/prepare listener returned no preparation')
    throwIfAborted(context.signal)
    const prepared = this.enforceSuppression(result as PromptPreparation, scope)
    registeredContexts.set(prepared, registered)
    return prepared
  }

  /**
   * Prepares (when no `preparation` is given), collects sections and tools,
   * runs the scope-filtered `system-prompt/assemble` waterfall, restores an
   * effective complete section as the only one, enforces suppression and
   * attaches the provider-owned tools.
   */
  async assemble(context: AssembleContext = {}, preparation?: PromptPreparation): Promise<PromptAssembly> {
    const prepared = preparation ?? (await this.prepare(context))
    throwIfAborted(context.signal)
    const { scope } = context
    const entries = [...this.layers.merged(scope, (layer) => layer.sections).values()].sort(byOrderThenName)
    const sections = entries.map((entry) => this.resolveSection(entry, context))
    // Required sections as collected, before any listener can touch them.
    const pristine = sections.map((section, i) => ({ ...section, required: entries[i]!.required }))
    const complete = sections.filter((section) => section.complete === true)
    if (complete.length > 1) {
      throw new Error(
        `multiple complete prompt sections: ${complete.map((s) => `"${s.name}"`).join(', ')}; at most one effective section may be the complete system prompt`,
      )
    }
    const pristineComplete = complete.length === 1 ? { ...complete[0]! } : undefined
    const tools = referenceCollectTools(this.layers.toolProviders(scope), context, this.toolOrder)
    // What the assembly collected before the waterfall is what it keeps,
    // suppression included (SPEC §2 Reliability).
    const keep = this.requiredIfSuppressed(scope)
    const presentation: PromptPresentation = {
      sections,
      contexts: prepared.contexts.map((item) => ({ ...item })),
      variables: { ...prepared.variables },
    }
    const result = await this.dispatch('system-prompt/assemble', presentation, context)
    if (!isObject(result)) throw new Error('system-prompt/assemble listener returned no presentation')
    throwIfAborted(context.signal)
    let out: PromptPresentation = { ...(result as PromptPresentation) }
    out.sections = restoreRequiredPlainly(pristine, pristineComplete === undefined ? out.sections : [{ ...pristineComplete }])
    if (keep !== undefined) out = { ...out, contexts: out.contexts.filter((item) => keep.has(item.name)) }
    const assembly: PromptAssembly = { ...out, tools }
    registeredContexts.set(assembly, registeredContexts.get(prepared) ?? NONE)
    return assembly
  }

  /**
   * A copy of `accepted` with current runtime contexts: still-registered
   * contexts re-read, since-disposed registrations dropped, listener-added
   * ones kept; under suppression only effective required registrations stay
   * (optional ones are dropped without calling their providers); missing
   * required registrations are appended in registry order.
   */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext = {}): T {
    const { scope } = context
    const effective = this.layers.merged(scope, (layer) => layer.contexts)
    const remembered = registeredContexts.get(accepted) ?? NONE
    const suppressed = this.layers.isSuppressed(scope)
    const contexts: AssembledContext[] = []
    for (const item of accepted.contexts) {
      const entry = effective.get(item.name)
      if (suppressed && entry?.required !== true) continue
      if (entry !== undefined) contexts.push(this.resolveContext(entry, context))
      else if (!remembered.has(item.name)) contexts.push({ ...item })
    }
    const present = new Set(contexts.map((item) => item.name))
    for (const entry of [...effective.values()].sort(byOrderThenName)) {
      if (entry.required && !present.has(entry.name)) contexts.push(this.resolveContext(entry, context))
    }
    const refreshed = { ...accepted, contexts }
    registeredContexts.set(refreshed, remembered)
    return refreshed
  }

  private resolveVariables(context: AssembleContext): Record<string, string | undefined> {
    const variables: Record<string, string | undefined> = {}
    for (const [name, entry] of this.layers.merged(context.scope, (layer) => layer.variables)) {
      const value = evaluateSource(entry.value, context)
      if (value !== undefined && typeof value !== 'string') {
        throw new TypeError(`prompt variable "${name}" must resolve to a string or undefined (got ${describe(value)})`)
      }
      variables[name] = value
    }
    return variables
  }

  private sortedContexts(scope: ScopeKey | undefined): ContextEntry[] {
    return [...this.layers.merged(scope, (layer) => layer.contexts).values()].sort(byOrderThenName)
  }

  private resolveSection(entry: SectionEntry, context: AssembleContext): AssembledSection {
    const text = evaluateSource(entry.text, context)
    if (typeof text !== 'string') {
      throw new TypeError(`prompt section "${entry.name}" text must resolve to a string (got ${describe(text)})`)
    }
    const section: AssembledSection = { name: entry.name, order: entry.order, text }
    if (!entry.interpolate) section.interpolate = false
    if (entry.complete) section.complete = true
    return section
  }

  private resolveContext(entry: ContextEntry, context: AssembleContext): AssembledContext {
    const text = evaluateSource(entry.text, context)
    if (typeof text !== 'string') {
      throw new TypeError(`prompt context "${entry.name}" text must resolve to a string (got ${describe(text)})`)
    }
    return entry.interpolate ? { name: entry.name, text } : { name: entry.name, text, interpolate: false }
  }

  // Under suppression, keeps only contexts named after an effective required registration.
  private enforceSuppression<T extends { contexts: AssembledContext[] }>(value: T, scope: ScopeKey | undefined): T {
    const keep = this.requiredIfSuppressed(scope)
    return keep === undefined ? value : { ...value, contexts: value.contexts.filter((item) => keep.has(item.name)) }
  }

  /** The names of the effective required contexts when `scope` is suppressed, else `undefined`. */
  private requiredIfSuppressed(scope: ScopeKey | undefined): ReadonlySet<string> | undefined {
    if (!this.layers.isSuppressed(scope)) return undefined
    return new Set(
      [...this.layers.merged(scope, (layer) => layer.contexts).values()]
        .filter((entry) => entry.required)
        .map((entry) => entry.name),
    )
  }

  private async dispatch(
    name: 'system-prompt/prepare' | 'system-prompt/assemble',
    value: object,
    context: AssembleContext,
  ): Promise<unknown> {
    const root = this.ctx.root
    // Loosely typed on purpose, and local to this test helper: the production
    // engine owns the typed event declarations; a different `this` type there
    // must not break the oracle. Cordis' waterfall is already bound to `root`.
    const waterfall = root.waterfall as unknown as (
      thisArg: object,
      name: string,
      value: object,
      context: AssembleContext,
      next: () => Promise<unknown>,
    ) => unknown
    return await waterfall(scopeTarget(this, context.scope), name, value, context, async () => value)
  }
}
