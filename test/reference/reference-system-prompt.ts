import { Service, type Context } from 'cordis'
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
import type { ScopeKey } from '../../src/scope/scope-key.js'
import { resolveReferenceConfig, type ReferenceSystemPromptConfig } from './config.js'
import {
  byOrderThenName,
  checkToolProvider,
  describe,
  duplicateError,
  orderedEntry,
  textOf,
  valueOf,
  variableEntry,
  type OrderedEntry,
} from './entries.js'
import { ReferenceLayers, type ReferenceLayer } from './layers.js'
import {
  REFERENCE_CONTEXT_BANDS,
  REFERENCE_IDENTITY_SECTION,
  REFERENCE_PREFIX_SECTION,
  REFERENCE_SECTION_BANDS,
  REFERENCE_SUFFIX_SECTION,
} from './orders.js'
import { labelsOf, rememberLabels } from './render.js'
import { referenceCarrier, tagOf, viewLabel, type ParentOf } from './scope.js'
import { referenceCollectTools } from './tools.js'
import { restoreRequiredPlainly } from './required.js'
import { checkListenerResult } from './waterfall.js'

declare module 'cordis' {
  interface Context {
    referencePrompt: ReferenceSystemPrompt
  }
}

/**
 * Which scope a result was made for, as enumerable symbol-keyed data: a
 * spread copy keeps it, while `structuredClone` and JSON drop symbol keys
 * (so such a copy is refreshed with whatever scope the caller gives).
 */
const MADE_FOR: unique symbol = Symbol('referencePrompt.madeFor') as never

type Made = { [MADE_FOR]?: { readonly scope: ScopeKey | undefined } }

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason
}

/** Inserts `value` under `name`; the undo removes exactly this insertion. */
function insertNamed<V>(map: Map<string, V>, name: string, value: V, duplicate: () => Error): () => void {
  if (map.has(name)) throw duplicate()
  map.set(name, value)
  return () => {
    if (map.get(name) === value) map.delete(name)
  }
}

function labelsByName(entries: Iterable<OrderedEntry>): Map<string, string> {
  const labels = new Map<string, string>()
  for (const entry of entries) labels.set(entry.name, entry.label)
  return labels
}

function checkContext(context: unknown): AssembleContext {
  if ((typeof context === 'object' && context !== null) || typeof context === 'function') return context as AssembleContext
  throw new TypeError(`assemble context must be an object (got ${describe(context)})`)
}

function checkScope(scope: unknown): ScopeKey | undefined {
  const key = typeof scope === 'function' || (typeof scope === 'object' && scope !== null)
  if (scope === undefined || key) return scope as ScopeKey | undefined
  throw new TypeError(`assemble context "scope" must be a scope key object (got ${describe(scope)})`)
}

/**
 * The ORACLE for the production `SystemPrompt`: the same contract (SPEC §2),
 * implemented the plain way and without importing the code it checks.
 * Registrations go into plain per-scope Maps, and every `prepare`/`assemble`/
 * `refreshContext` call recomputes everything from scratch: merge the layers,
 * call every effective provider, sort, clone. Provides `ctx.referencePrompt`.
 */
export class ReferenceSystemPrompt extends Service {
  // TS-private, not `#`: Cordis hands methods a proxy of the instance as `this`.
  private readonly layers: ReferenceLayers
  private readonly parentOf: ParentOf
  private readonly toolOrder: readonly string[] | undefined
  private readonly emitChanges: boolean
  private readonly sectionBands: Readonly<Record<string, number>>
  private readonly contextBands: Readonly<Record<string, number>>

  /** Validates `config` (throws `TypeError` at load) and registers the configured global sections. */
  constructor(ctx: Context, config: ReferenceSystemPromptConfig = {}) {
    const resolved = resolveReferenceConfig(config)
    super(ctx, 'referencePrompt')
    this.parentOf = resolved.parentOf
    this.layers = new ReferenceLayers(resolved.parentOf)
    this.toolOrder = resolved.toolOrder
    this.emitChanges = resolved.emitChanges
    this.sectionBands = { ...REFERENCE_SECTION_BANDS, ...resolved.sectionOrders }
    this.contextBands = { ...REFERENCE_CONTEXT_BANDS, ...resolved.contextOrders }
    const global = this.layers.global
    const configSection = (name: string, band: string, text: string): void => {
      const entry = orderedEntry('prompt section', { name, order: REFERENCE_SECTION_BANDS[band], text }, undefined)
      ctx.effect(() => insertNamed(global.sections, name, entry, () => duplicateError('prompt section', name, undefined)), 'referencePrompt.config')
    }
    if (resolved.includeHarnessIdentity) configSection(REFERENCE_IDENTITY_SECTION, 'HARNESS_IDENTITY', resolved.identity)
    configSection(REFERENCE_PREFIX_SECTION, 'DEPLOYMENT_PERSONA_PREFIX', resolved.personaPrefix)
    configSection(REFERENCE_SUFFIX_SECTION, 'DEPLOYMENT_PERSONA_SUFFIX', resolved.personaSuffix)
    if (!resolved.includeRuntimeContext) {
      ctx.effect(() => {
        const token = {}
        global.suppressors.add(token)
        return () => void global.suppressors.delete(token)
      }, 'referencePrompt.config')
    }
  }

  // Runs `action` on the caller's exact layer inside an effect owned by the caller's fiber.
  private register(label: string, action: (layer: ReferenceLayer) => () => void): () => Promise<void> {
    const layer = this.layers.layerOf(tagOf(this.ctx))
    if (!this.emitChanges) return this.ctx.effect(() => action(layer), label)
    const root = this.ctx.root as unknown as { emit(name: string): void }
    return this.ctx.effect(() => {
      const undo = action(layer)
      root.emit('system-prompt/change')
      return () => {
        undo()
        root.emit('system-prompt/change')
      }
    }, label)
  }

  /** Registers a section in the caller's scope; returns the exact Cordis effect disposer. */
  section(section: PromptSection): () => Promise<void> {
    const scope = tagOf(this.ctx)
    const entry = orderedEntry('prompt section', section, scope)
    return this.register('referencePrompt.section()', (layer) =>
      insertNamed(layer.sections, entry.name, entry, () => duplicateError('prompt section', entry.name, scope)),
    )
  }

  /** Registers a runtime context in the caller's scope; returns the exact Cordis effect disposer. */
  context(context: PromptContext): () => Promise<void> {
    const scope = tagOf(this.ctx)
    const entry = orderedEntry('runtime context', context, scope)
    return this.register('referencePrompt.context()', (layer) =>
      insertNamed(layer.contexts, entry.name, entry, () => duplicateError('runtime context', entry.name, scope)),
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
    checkToolProvider(provider, tagOf(this.ctx))
    return this.register('referencePrompt.tools()', (layer) => {
      const entry = { provider }
      layer.tools.add(entry)
      return () => void layer.tools.delete(entry)
    })
  }

  /** Registers a prompt variable in the caller's scope; returns the exact Cordis effect disposer. */
  variable(name: string, provider: VariableSource, options?: VariableOptions): () => Promise<void> {
    const scope = tagOf(this.ctx)
    const entry = variableEntry(name, provider, options?.stability, scope)
    return this.register('referencePrompt.variable()', (layer) =>
      insertNamed(layer.variables, name, entry, () => duplicateError('prompt variable', name, scope)),
    )
  }

  /** The order of a named section band (SPEC's table plus config `sectionOrders`). */
  getSectionOrder(name: string): number {
    if (Object.hasOwn(this.sectionBands, name)) return this.sectionBands[name]!
    throw new TypeError(`unknown section order "${name}"; known: ${Object.keys(this.sectionBands).join(', ')}`)
  }

  /** The order of a named runtime-context band (SPEC's table plus config `contextOrders`). */
  getContextOrder(name: string): number {
    if (Object.hasOwn(this.contextBands, name)) return this.contextBands[name]!
    throw new TypeError(`unknown context order "${name}"; known: ${Object.keys(this.contextBands).join(', ')}`)
  }

  /**
   * Resolves every effective variable and (unless suppressed, then only the
   * required ones) every effective context, each marked `registered: true`,
   * then runs the scope-filtered `system-prompt/prepare` waterfall. Rejects
   * with `signal.reason` when aborted before or after the waterfall.
   */
  async prepare(context: AssembleContext = {}): Promise<PromptPreparation> {
    checkContext(context)
    const scope = checkScope(context.scope)
    throwIfAborted(context.signal)
    const variables: Record<string, string | undefined> = {}
    for (const [name, entry] of this.layers.merged(scope, (layer) => layer.variables)) variables[name] = valueOf(entry, context)
    const effective = this.sortedContexts(scope)
    const suppressed = this.layers.isSuppressed(scope)
    const contexts = effective.filter((entry) => !suppressed || entry.flag).map((entry) => this.readContext(entry, context))
    const result = await this.dispatch('system-prompt/prepare', { variables, contexts }, context)
    throwIfAborted(context.signal)
    // A variable that became effective while the waterfall ran joins under a name the result does not set.
    const late: Record<string, string | undefined> = {}
    for (const [name, entry] of this.layers.merged(scope, (layer) => layer.variables)) {
      if (!Object.hasOwn(variables, name) && !Object.hasOwn(result.variables, name)) late[name] = valueOf(entry, context)
    }
    const prepared: PromptPreparation = {
      ...result,
      variables: { ...result.variables, ...late },
      contexts: this.enforceSuppression(result.contexts, scope),
    }
    return this.made(prepared, scope, { contexts: labelsByName(effective) })
  }

  /**
   * Prepares (when no `preparation` is given), collects sections and tools,
   * runs the scope-filtered `system-prompt/assemble` waterfall, restores an
   * effective complete section as the only one, enforces suppression and
   * attaches the provider-owned tools.
   */
  async assemble(context: AssembleContext = {}, preparation?: PromptPreparation): Promise<PromptAssembly> {
    checkContext(context)
    const scope = checkScope(context.scope)
    const prepared = preparation ?? (await this.prepare(context))
    throwIfAborted(context.signal)
    const entries = [...this.layers.merged(scope, (layer) => layer.sections).values()].sort(byOrderThenName)
    const complete = entries.filter((entry) => entry.flag)
    if (complete.length > 1) {
      throw new Error(
        `multiple complete prompt sections in ${viewLabel(scope)}: ${complete.map((entry) => entry.label).join(', ')}; keep one complete section per scope`,
      )
    }
    const sections = entries.map((entry) => this.readSection(entry, context))
    const tools = referenceCollectTools(
      this.layers.toolProviders(scope).map(({ provider, layer, index }) => ({ provider, scope: layer.scope, index })),
      context,
      this.toolOrder,
    )
    const pristine = complete.length === 1 ? { ...sections[entries.indexOf(complete[0]!)]! } : undefined
    // Every section as collected, before any listener can touch it, for the required-section restore.
    const collected = sections.map((section, i) => ({ ...section, required: entries[i]!.required }))
    // What the assembly collected before the waterfall is what it keeps,
    // suppression included (SPEC §2 Reliability).
    const suppressed = this.layers.isSuppressed(scope)
    const required = this.requiredNames(scope)
    const presentation: PromptPresentation = {
      sections,
      contexts: prepared.contexts.map((item) => ({ ...item })),
      variables: { ...prepared.variables },
    }
    const result = (await this.dispatch('system-prompt/assemble', presentation, context)) as PromptPresentation
    throwIfAborted(context.signal)
    const assembly: PromptAssembly = {
      ...result,
      sections: restoreRequiredPlainly(collected, pristine === undefined ? result.sections : [pristine]),
      contexts: suppressed ? result.contexts.filter((item) => required.has(item.name)) : result.contexts,
      tools,
    }
    const contextLabels = labelsOf(prepared)?.contexts ?? labelsByName(this.sortedContexts(scope))
    return this.made(assembly, scope, { sections: labelsByName(entries), contexts: contextLabels })
  }

  /**
   * A copy of `accepted` with current runtime contexts: a `registered: true`
   * context whose registration is still effective is re-read, one whose
   * registration is gone is dropped, an unmarked (listener-added) one keeps
   * its accepted text; then current suppression removes optional ones (their
   * providers are not called); then missing required registrations are
   * appended in registry order. A result made for another scope throws.
   */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext = {}): T {
    checkContext(context)
    const madeFor = (accepted as Made)[MADE_FOR]
    if (madeFor !== undefined && madeFor.scope !== context.scope) {
      throw new Error(
        `an accepted result assembled for ${viewLabel(madeFor.scope)} cannot be refreshed for ${viewLabel(context.scope)}: its contexts would be read from the wrong registry; pass the scope it was assembled for`,
      )
    }
    const scope = checkScope(context.scope)
    const effective = this.layers.merged(scope, (layer) => layer.contexts)
    const suppressed = this.layers.isSuppressed(scope)
    const required = this.requiredNames(scope)
    const contexts: AssembledContext[] = []
    for (const item of accepted.contexts) {
      if (suppressed && !required.has(item.name)) continue
      if ((item as { registered?: unknown }).registered !== true) {
        contexts.push({ ...item })
        continue
      }
      const entry = effective.get(item.name)
      if (entry !== undefined) contexts.push(this.readContext(entry, context))
    }
    const present = new Set(contexts.map((item) => item.name))
    for (const entry of [...effective.values()].sort(byOrderThenName)) {
      if (entry.flag && !present.has(entry.name)) contexts.push(this.readContext(entry, context))
    }
    const labels = labelsOf(accepted)
    const refreshed = this.made({ ...accepted, contexts }, scope, undefined)
    return labels === undefined ? refreshed : rememberLabels(refreshed, labels)
  }

  /** Marks `result` as made for `scope` and remembers its render labels (scoped views only). */
  private made<T extends object>(result: T, scope: ScopeKey | undefined, labels: Parameters<typeof rememberLabels>[1] | undefined): T {
    ;(result as Made)[MADE_FOR] = { scope }
    return labels === undefined || scope === undefined ? result : rememberLabels(result, labels)
  }

  private sortedContexts(scope: ScopeKey | undefined): OrderedEntry[] {
    return [...this.layers.merged(scope, (layer) => layer.contexts).values()].sort(byOrderThenName)
  }

  private requiredNames(scope: ScopeKey | undefined): ReadonlySet<string> {
    return new Set(this.sortedContexts(scope).filter((entry) => entry.flag).map((entry) => entry.name))
  }

  private readSection(entry: OrderedEntry, context: AssembleContext): AssembledSection {
    const section: AssembledSection = { name: entry.name, order: entry.order, text: textOf(entry, context) }
    if (!entry.interpolate) section.interpolate = false
    if (entry.flag) section.complete = true
    return section
  }

  private readContext(entry: OrderedEntry, context: AssembleContext): AssembledContext {
    const text = textOf(entry, context)
    const marked: AssembledContext & { registered: true } = { name: entry.name, text, registered: true }
    if (!entry.interpolate) marked.interpolate = false
    return marked
  }

  // Under suppression, keeps only contexts named after an effective required registration.
  private enforceSuppression(contexts: AssembledContext[], scope: ScopeKey | undefined): AssembledContext[] {
    if (!this.layers.isSuppressed(scope)) return contexts
    const required = this.requiredNames(scope)
    return contexts.filter((item) => required.has(item.name))
  }

  private async dispatch(
    name: 'system-prompt/prepare' | 'system-prompt/assemble',
    value: PromptPreparation | PromptPresentation,
    context: AssembleContext,
  ): Promise<PromptPreparation> {
    // Loosely typed on purpose: the production engine owns the typed event
    // declarations, and the oracle must not depend on them. Cordis' waterfall
    // is already bound to `root`.
    const waterfall = this.ctx.root.waterfall as unknown as (
      thisArg: object,
      name: string,
      value: object,
      context: AssembleContext,
      next: () => Promise<unknown>,
    ) => Promise<unknown>
    const carrier = referenceCarrier(this, context.scope, this.parentOf)
    const result = await waterfall(carrier, name, value, context, async () => value)
    return checkListenerResult(name, result, 'sections' in value)
  }
}
