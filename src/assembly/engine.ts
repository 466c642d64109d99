import { signal, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { ChangeRelay } from '../signals/change-relay.js'
import { watchParentChanges } from '../scope/parent-chain.js'
import { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/named-entries.js'
import { scopeLabel, type ScopeKey } from '../scope/scope-key.js'
import type { ResolvedSystemPromptConfig } from './config.js'
import {
  describeValue,
  labelOf,
  PromptLayer,
  SourceKind,
  type ContextEntry,
  type SectionEntry,
  type Source,
  type ToolEntry,
  type VariableEntry,
} from './entries.js'
import { assembledFor, namedSourcesOf, recordOf, recordScope, sectionSourcesOf, withRecord, type AssemblyProvenance, type RenderSlot } from './provenance.js'
import { pinRequired, restoreRequired } from './required-sections.js'
import { createStats, type PromptStats } from './stats.js'
import { collectTools, sameResults, snapshotOf, ToolDetacher, toolProviderLabel, type ToolMemo } from './tools.js'
import type {
  AssembleContext,
  AssembledContext,
  AssembledSection,
  PromptAssembly,
  PromptPreparation,
  PromptPresentation,
  ToolSchema,
} from './types.js'
import { ScopeView, type SectionPlan, type ViewHost } from './view.js'
import { checkWaterfallResult } from './waterfall-result.js'

/** The slice of Cordis' events service the engine dispatches through (the raw object, no proxy). */
export interface EventDispatcher {
  waterfall(thisArg: object, name: string, ...args: unknown[]): unknown
  /** Resolves the listeners of an event without calling them (Cordis 4 rc.10, marked deprecated there). */
  dispatch(mode: 'emit', args: [name: string]): (() => unknown)[]
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason
}

/** `scope "agent-1"`, or `the global view`, for error messages. */
function viewName(scope: ScopeKey | undefined): string {
  return scope === undefined ? 'the global view' : `scope "${scopeLabel(scope)}"`
}

/**
 * The registry and its memoized assembly graph, free of Cordis' proxies: the
 * `SystemPrompt` service reads it once per call and everything on the hot
 * path below is plain objects and signals.
 */
export class PromptEngine {
  readonly store: ScopedLayers<PromptLayer>
  readonly stats: PromptStats = createStats()
  readonly #detacher = new ToolDetacher()
  /** Moves on every registration, disposal and parent re-link; watched by `#changes`. */
  readonly #revision = signal(0)
  /** Watches the revision and every registered signal-valued input; the change effect reads its pulse. */
  readonly #changes = new ChangeRelay()
  #views = new WeakMap<ScopeKey, ScopeView>()
  #globalView: ScopeView
  readonly #host: ViewHost
  /** Per-view step caches, owned here so a view stays computeds only: the tools last built, and the render slot. */
  readonly #toolMemos = new WeakMap<ScopeView, ToolMemo>()
  readonly #slots = new WeakMap<ScopeView, RenderSlot>()
  readonly #config: ResolvedSystemPromptConfig
  readonly #events: EventDispatcher
  readonly #carrierBase: object
  readonly #unwatchParents: () => void

  constructor(config: ResolvedSystemPromptConfig, events: EventDispatcher, carrierBase: object) {
    this.#config = config
    this.#events = events
    this.#carrierBase = carrierBase
    // peek, not value: a registration made inside someone's effect must not subscribe it to the revision.
    this.store = new ScopedLayers(
      (scope) => new PromptLayer(scope),
      () => void (this.#revision.value = this.#revision.peek() + 1),
    )
    this.#changes.add(this.#revision)
    // Any re-link may change some scope's effective view here (a scope with no
    // layer of its own inherits from its new parent), so every one counts.
    this.#unwatchParents = watchParentChanges(this.#revision)
    const host: ViewHost = {
      viewOf: (scope) => this.#viewOf(scope),
      current: (scope) => this.view(scope),
      generation: 0,
      deriving: false,
    }
    this.#host = host
    this.#globalView = new ScopeView(undefined, this.store, this.stats, carrierBase, host)
  }

  /**
   * The memoized view of `scope` (the global view for `undefined`), created on
   * first use. After a derivation that threw, every view is dropped first (a
   * new generation): its computeds may hold the error, or be left marked
   * running by a stack overflow inside preact, and nothing else clears that.
   */
  view(scope: ScopeKey | undefined): ScopeView {
    const host = this.#host
    if (host.deriving) {
      this.#views = new WeakMap()
      host.generation++
      this.#globalView = new ScopeView(undefined, this.store, this.stats, this.#carrierBase, this.#host)
      host.deriving = false
    }
    return this.#viewOf(scope)
  }

  #viewOf(scope: ScopeKey | undefined): ScopeView {
    if (scope === undefined) return this.#globalView
    let view = this.#views.get(scope)
    if (view === undefined) {
      if (typeof scope !== 'object' || scope === null) {
        throw new TypeError(`assemble context "scope" must be a scope key object (got ${describeValue(scope)})`)
      }
      this.#views.set(scope, (view = new ScopeView(scope, this.store, this.stats, this.#carrierBase, this.#host)))
    }
    return view
  }

  /** Stops hearing about parent re-links and registered signals; called when the service unloads. */
  close(): void {
    this.#unwatchParents()
    this.#changes.clear()
  }

  /**
   * Drops the memoized view of `scope` (its computeds, tool memo and render
   * memos). Called when a scope fiber is disposed, so a disposed scope whose
   * key is still referenced elsewhere retains nothing here; a later assembly
   * of that key simply builds a fresh view.
   */
  release(scope: ScopeKey): void {
    // Views below may still derive from this one; they stay correct, but it
    // keeps no rendered text or tools for them.
    const view = this.#views.get(scope)
    if (view !== undefined) {
      this.#toolMemos.delete(view)
      this.#slots.delete(view)
    }
    this.#views.delete(scope)
  }

  // ── registration ──────────────────────────────────────────────────────────

  /**
   * Registers through `ctx` (visibility and ownership) with `insert`, which
   * must throw before changing anything. A signal-valued input is watched for
   * the change effect for as long as the registration lives (O(1) to add and
   * to remove, whatever else is registered).
   */
  register(
    ctx: Context,
    label: string,
    input: ReadonlySignal<unknown> | undefined,
    insert: (layer: PromptLayer) => Undo,
  ): () => Promise<void> {
    return this.store.effect(
      ctx,
      (layer) => {
        const undo = insert(layer)
        if (input === undefined) return undo
        this.#changes.add(input)
        return () => {
          undo()
          this.#changes.delete(input)
        }
      },
      { label },
    )
  }

  /**
   * The body of the effect that calls `emit` after every effective registry
   * change (a registration, a disposal, a layer or parent change, or a new
   * value of a registered signal), once per `batch()`; the first run only
   * subscribes. It reads one signal, the relay's pulse, so a write costs the
   * same however many signal inputs are registered (see `ChangeRelay`).
   */
  changeEffect(emit: () => void): () => void {
    let first = true
    return () => {
      this.#changes.pulse.value
      if (first) {
        first = false
        return
      }
      untracked(() => {
        this.stats.changeEvents++
        emit()
      })
    }
  }

  // ── evaluation ────────────────────────────────────────────────────────────

  #read<T>(entry: Source<T>, context: AssembleContext): unknown {
    if (entry.kind === SourceKind.Static) return entry.value
    if (entry.kind === SourceKind.Signal) return entry.signal!.value
    this.stats.providerEvaluations++
    return entry.fn!(context)
  }

  #text(entry: SectionEntry | ContextEntry, context: AssembleContext): string {
    const text = entry.kind === SourceKind.Static ? entry.value! : this.#read(entry, context)
    if (typeof text === 'string') return text
    throw new TypeError(
      `${labelOf(entry)} text ${entry.kind === SourceKind.Signal ? 'signal holds' : 'provider returned'} ${describeValue(text)}; it must be a string`,
    )
  }

  #variable(entry: VariableEntry, context: AssembleContext): string | undefined {
    const value = this.#read(entry, context)
    if (value === undefined || typeof value === 'string') return value
    throw new TypeError(
      `${labelOf(entry)} ${entry.kind === SourceKind.Signal ? 'signal holds' : 'provider returned'} ${describeValue(value)}; it must be a string or undefined`,
    )
  }

  #context(entry: ContextEntry, context: AssembleContext): AssembledContext {
    const text = this.#text(entry, context)
    return entry.interpolate
      ? { name: entry.name, text, registered: true }
      : { name: entry.name, text, interpolate: false, registered: true }
  }

  /** The render slot of `view`, created on first use. */
  #slotOf(view: ScopeView): RenderSlot {
    let slot = this.#slots.get(view)
    if (slot === undefined) this.#slots.set(view, (slot = { stats: this.stats }))
    return slot
  }

  /** Fresh sections of `plan`, and their texts as collected (`collected[i]` is `out[i].text`). */
  #sections(plan: SectionPlan, context: AssembleContext, collected: string[]): AssembledSection[] {
    const { entries } = plan
    const out = new Array<AssembledSection>(entries.length)
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      const { name, order } = entry
      const text = entry.kind === SourceKind.Static ? entry.value! : this.#text(entry, context)
      collected[i] = text
      if (entry.interpolate) {
        out[i] = entry.complete ? { name, order, text, complete: true } : { name, order, text }
      } else {
        out[i] = entry.complete
          ? { name, order, text, interpolate: false, complete: true }
          : { name, order, text, interpolate: false }
      }
    }
    return out
  }

  #tools(view: ScopeView, context: AssembleContext): readonly ToolSchema[] {
    const entries = view.derive('tools')
    const results = new Array<unknown>(entries.length)
    for (let i = 0; i < entries.length; i++) results[i] = this.#toolResult(entries[i]!, context)
    const memo = this.#toolMemos.get(view)
    if (memo !== undefined && memo.entries === entries && sameResults(memo.results, memo.snapshot, results)) {
      return memo.tools
    }
    const provided = results.map((result, i) => ({ result, label: toolProviderLabel(entries, i) }))
    const tools = collectTools(provided, this.#config.toolOrder, this.#detacher)
    this.stats.toolClones = this.#detacher.clones
    this.#toolMemos.set(view, { entries, results, snapshot: results.map(snapshotOf), tools })
    return tools
  }

  #toolResult(entry: ToolEntry, context: AssembleContext): unknown {
    if (entry.kind === SourceKind.Signal) return entry.signal!.value
    this.stats.providerEvaluations++
    return entry.fn!(context)
  }

  async #waterfall<T extends PromptPreparation | PromptPresentation>(
    view: ScopeView,
    name: string,
    value: T,
    context: AssembleContext,
  ): Promise<T> {
    const result = (await this.#events.waterfall(view.carrier, name, value, context, () =>
      Promise.resolve(value),
    )) as unknown
    checkWaterfallResult(name, 'sections' in value, result)
    return result as T
  }

  // ── prepare / assemble / refresh ──────────────────────────────────────────

  /** See `SystemPrompt.prepare`. */
  async prepare(context: AssembleContext): Promise<PromptPreparation> {
    const view = this.view(context.scope)
    throwIfAborted(context.signal)
    const variables: Record<string, string | undefined> = {}
    const variablePlan = view.derive('variables')
    for (const entry of variablePlan.entries) variables[entry.name] = this.#variable(entry, context)
    const contextPlan = view.derive('contexts')
    const suppressed = view.derive('suppressed')
    const registered = suppressed ? contextPlan.required : contextPlan.entries
    const contexts = registered.map((entry) => this.#context(entry, context))
    const preparation: PromptPreparation = { variables, contexts }
    const result = await this.#waterfall(view, 'system-prompt/prepare', preparation, context)
    throwIfAborted(context.signal)
    // Suppression as of now: a prepare listener may have registered a suppressor.
    const contextsNow = view.derive('contexts')
    const enforced = view.derive('suppressed')
      ? result.contexts.filter((c) => contextsNow.requiredNames.has(c.name))
      : result.contexts
    const out = result === preparation && enforced === result.contexts ? result : { ...result, contexts: enforced }
    // Only an array this call made is tied to the scope (a listener's might be shared).
    if (out.contexts === contexts || out.contexts !== result.contexts) recordScope(out.contexts, view.key)
    const provenance: AssemblyProvenance = {
      scope: view.key,
      contexts: namedSourcesOf(contextPlan.entries),
      variables: namedSourcesOf(variablePlan.entries),
    }
    return withRecord(out, { provenance, slot: this.#slotOf(view) })
  }

  /** See `SystemPrompt.assemble`. */
  async assemble(context: AssembleContext, preparation?: PromptPreparation): Promise<PromptAssembly> {
    this.stats.assemblies++
    const view = this.view(context.scope)
    const prepared = preparation ?? (await this.prepare(context))
    throwIfAborted(context.signal)
    const plan = view.derive('sections')
    if (plan.complete.length > 1) {
      throw new Error(
        `multiple complete prompt sections in ${view.key === undefined ? 'the global view' : `scope "${scopeLabel(view.key)}"`}: ${plan.complete.map(labelOf).join(', ')}; keep one complete section per scope`,
      )
    }
    const collected = new Array<string>(plan.entries.length)
    const sections = this.#sections(plan, context, collected)
    const tools = this.#tools(view, context)
    const complete = plan.complete.length === 1 ? { ...sections[plan.entries.indexOf(plan.complete[0]!)]! } : undefined
    // Required sections (SPEC §5), copied before any listener can touch them.
    const pinned = pinRequired(plan.entries, sections)
    const suppressed = view.derive('suppressed')
    const requiredNames = view.derive('contexts').requiredNames
    const presentation: PromptPresentation = {
      sections,
      contexts: prepared.contexts.map((c) => ({ ...c })),
      variables: { ...prepared.variables },
    }
    const result = await this.#waterfall(view, 'system-prompt/assemble', presentation, context)
    throwIfAborted(context.signal)
    const required = restoreRequired(complete === undefined ? result.sections : [complete], result.sections, pinned)
    const assembly: PromptAssembly = {
      ...result,
      sections: required.sections,
      contexts: suppressed ? result.contexts.filter((c) => requiredNames.has(c.name)) : result.contexts,
      tools: tools.slice(),
    }
    // Only an array this call made is tied to the scope (a listener's might be shared).
    if (assembly.contexts === presentation.contexts || assembly.contexts !== result.contexts) {
      recordScope(assembly.contexts, view.key)
    }
    const prepared_ = recordOf(prepared)?.provenance
    const provenance: AssemblyProvenance = {
      scope: view.key,
      sections: sectionSourcesOf(plan.entries),
      collected,
      contexts: prepared_?.contexts ?? namedSourcesOf(view.derive('contexts').entries),
      variables: prepared_?.variables ?? namedSourcesOf(view.derive('variables').entries),
      restored: required.restored,
      stabilityGuard: this.#config.stabilityGuard,
    }
    return withRecord(assembly, { provenance, slot: this.#slotOf(view) })
  }

  /**
   * See `SystemPrompt.refreshContext`. Which contexts were registrations
   * travels on the contexts themselves (`registered: true`), so a refreshed
   * result or any structural copy refreshes like the original acceptance.
   */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext): T {
    const known = assembledFor(accepted)
    if (known !== undefined && known.scope !== context.scope) {
      throw new Error(
        `an accepted result assembled for ${viewName(known.scope)} cannot be refreshed for ${viewName(context.scope)}: its contexts would be read from the wrong registry; pass the scope it was assembled for`,
      )
    }
    const view = this.view(context.scope)
    const plan = view.derive('contexts')
    const suppressed = view.derive('suppressed')
    const contexts: AssembledContext[] = []
    for (const item of accepted.contexts) {
      if (item.registered === true) {
        // Re-read while its registration is effective; dropped once it is gone.
        const entry = plan.byName.get(item.name)
        if (entry !== undefined && (!suppressed || entry.required)) contexts.push(this.#context(entry, context))
      } else if (!suppressed || plan.requiredNames.has(item.name)) {
        // Only a waterfall listener supplied it: keep the accepted text.
        contexts.push({ ...item })
      }
    }
    const present = new Set(contexts.map((c) => c.name))
    for (const entry of plan.required) if (!present.has(entry.name)) contexts.push(this.#context(entry, context))
    recordScope(contexts, view.key)
    const refreshed = { ...accepted, contexts }
    const record = recordOf(accepted)
    return record === undefined ? refreshed : withRecord(refreshed, record)
  }
}
