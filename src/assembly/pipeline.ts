import { signal, untracked, type ReadonlySignal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { ChangeRelay } from '../signals/tracked.js'
import { watchParentChanges } from '../scope/parent-chain.js'
import { ScopedLayers } from '../scope/scoped-layers.js'
import type { Undo } from '../scope/layer-entries.js'
import { isObjectLike, scopeOf, type ScopeKey } from '../scope/scope-key.js'
import { labelOf, PromptLayer, type SectionEntry } from './entries.js'
import { checkShape, describeValue, disposedService, viewName, wrongScope, type Culprit } from './errors.js'
import { Evaluation } from './evaluation.js'
import type { CordisBridge } from './cordis-internals.js'
import { pinRequired, restoreRequired } from './required-sections.js'
import type { ResolvedSystemPromptConfig } from './config.js'
import { Diagnostics } from './diagnostics.js'
import { assembledFor, recordOf, recordScope, withRecord, type AssemblyProvenance } from './provenance.js'
import type { AssembleContext, AssembledContext, AssembledSection, PromptAssembly, PromptStats } from './types.js'
import type { PromptPreparation, PromptPresentation, RegistrationDisposer } from './types.js'
import { ViewCache } from './view-cache.js'
import type { ContextPlan, ScopeView } from './view.js'

const PREPARE = 'system-prompt/prepare'
const ASSEMBLE = 'system-prompt/assemble'
const CHANGE = 'system-prompt/change'

/** A preparation with the provenance of its plans (`undefined`: a caller's own preparation). */
type Prepared = { readonly preparation: PromptPreparation; readonly provenance: AssemblyProvenance | undefined }

/** Who handed over a malformed preparation (checked so it fails its call, not a later render): a listener, or the caller. */
const listener = (event: string): Culprit => ({ is: `a "${event}" listener resolved to`, has: `a "${event}" listener returned`,
  fix: 'return (or resolve to) the value of next(), or a modified copy of it' })
const LISTENERS: Readonly<Record<string, Culprit>> = { [PREPARE]: listener(PREPARE), [ASSEMBLE]: listener(ASSEMBLE) }
const CALLER: Culprit = { is: 'assemble() was given a preparation that is', has: 'assemble() was given a preparation with',
  fix: 'leave it out, or pass what prepare() resolved to (or an object { variables, contexts })' }

function requiredOnly(plan: ContextPlan, contexts: AssembledContext[]): AssembledContext[] {
  return contexts.filter((c) => plan.byName.get(c.name)?.required)
}

/** Fresh, mutable sections for `entries` with their collected `texts`, index for index. */
function sectionsOf(entries: readonly SectionEntry[], texts: readonly string[]): AssembledSection[] {
  return entries.map(({ name, order, interpolate, complete }, i) => {
    const section: AssembledSection = { name, order, text: texts[i]! }
    if (!interpolate) section.interpolate = false
    if (complete) section.complete = true
    return section
  })
}

/**
 * A service's registry, views and memoized assembly, free of Cordis' proxies. `prepare`, `assemble` and `refreshContext`
 * have their contracts on `SystemPrompt`; every result is recorded with its provenance and render slot (provenance.ts).
 */
export class Pipeline {
  readonly stats: PromptStats = { assemblies: 0, structureRecomputes: 0, providerEvaluations: 0, sectionRenders: 0,
    renderCacheHits: 0, toolClones: 0, changeEvents: 0 }
  readonly #edits = signal(0)
  // peek, not value: a registration made inside someone's effect must not subscribe it.
  readonly store = new ScopedLayers((scope) => new PromptLayer(scope), () => void (this.#edits.value = this.#edits.peek() + 1))
  /** Moves on every registration, disposal, parent re-link and signal input write. */
  readonly #changes = new ChangeRelay()
  // Any re-link may change some scope's effective view (a scope without a layer inherits from its new parent).
  readonly #unwatchParents = watchParentChanges(this.#edits)
  readonly views: ViewCache
  readonly diagnostics: Diagnostics
  readonly #evaluation: Evaluation
  /** Set by `close`: a registration would land in, and an assembly read from, a dead registry. */
  #closed = false

  constructor(
    readonly config: ResolvedSystemPromptConfig,
    private readonly events: CordisBridge,
    carrierBase: object,
  ) {
    this.#changes.add(this.#edits)
    this.views = new ViewCache(this.store, this.stats, carrierBase, config.renderCacheScopes)
    this.#evaluation = new Evaluation(this.stats, config)
    this.diagnostics = new Diagnostics(config.stabilityGuard)
  }

  /** The service's plugin unloaded: stops hearing about parent re-links and registered signals, and refuses registrations. */
  close(): void {
    this.#closed = true
    this.#unwatchParents()
    this.#changes.clear()
  }

  /**
   * Registers `make`'s entry for `ctx`'s scope under `label` with `insert` (which throws before changing anything),
   * watching its signal while it lives. Throws once closed (before `make` validates), then what `make` throws.
   */
  register<E extends { readonly signal?: ReadonlySignal<unknown> }>(
    ctx: Context,
    label: string,
    make: (scope: ScopeKey | undefined) => E,
    insert: (layer: PromptLayer, entry: E) => Undo,
  ): RegistrationDisposer {
    if (this.#closed) throw disposedService(`${label} cannot register`, 'register')
    const entry = make(scopeOf(ctx))
    const input = entry.signal
    const action = (layer: PromptLayer): Undo => {
      const undo = insert(layer, entry)
      if (input === undefined) return undo
      this.#changes.add(input)
      return () => {
        undo()
        this.#changes.delete(input)
      }
    }
    return this.store.effect(ctx, action, { label })
  }

  /** An effect body that emits the change event once per `batch()` after any registry change; its first run only subscribes. */
  changeEffect(failed: (error: unknown) => void): () => void {
    let first = true
    return () => {
      this.#changes.pulse.value
      if (first) {
        first = false
        return
      }
      untracked(() => {
        this.stats.changeEvents++
        if (this.events.mayHear(CHANGE)) this.events.emit(CHANGE, failed)
      })
    }
  }

  /** Throws for a non-object `context`, once closed, then (`abortable`) its abort reason: at the start and after a waterfall. */
  #live(call: string, context: AssembleContext, abortable = true): void {
    if (!isObjectLike(context)) throw new TypeError(`assemble context must be an object (got ${describeValue(context)})`)
    if (this.#closed) throw disposedService(`${call} cannot run`, 'call it')
    if (abortable && context.signal?.aborted) throw context.signal.reason
  }

  async #waterfall<T extends PromptPreparation | PromptPresentation>(view: ScopeView, name: string, value: T, context: AssembleContext): Promise<T> {
    const result: unknown = await this.events.waterfall(view.carrier, name, value, context, () => Promise.resolve(value))
    checkShape(LISTENERS[name]!, result, 'sections' in value ? ['contexts', 'sections'] : ['contexts'], true)
    return result as T
  }

  async prepare(context: AssembleContext): Promise<PromptPreparation> {
    this.#live('prepare()', context)
    const prepared = this.#prepare(this.views.view(context.scope), context, true)
    return (prepared instanceof Promise ? await prepared : prepared).preparation
  }

  /** Synchronous when nobody listens to the prepare waterfall; `recorded` unless `assemble` makes it for itself. */
  #prepare(view: ScopeView, context: AssembleContext, recorded: boolean): Prepared | Promise<Prepared> {
    const { plan: variablePlan, values: variables } = this.#evaluation.variables(view, context)
    const contextPlan = view.derive('contexts')
    const registered = view.derive('suppressed') ? contextPlan.required : contextPlan.entries
    const contexts = registered.map((entry) => this.#evaluation.context(entry, context))
    const preparation: PromptPreparation = { variables, contexts }
    // The end of a prepare: the abort check, and suppression as of now (a prepare listener may have registered a suppressor).
    const done = (result: PromptPreparation, variablesFrom = variablePlan): Prepared => {
      this.#live(recorded ? 'prepare()' : 'assemble()', context)
      const provenance: AssemblyProvenance = { scope: view.key, contexts: contextPlan.sources, variables: variablesFrom.sources }
      const enforced = view.derive('suppressed') ? requiredOnly(view.derive('contexts'), result.contexts) : result.contexts
      const out = result === preparation && enforced === result.contexts ? result : { ...result, contexts: enforced }
      if (!recorded) return { preparation: out, provenance }
      recordScope(out.contexts, view.key, preparation.contexts, result.contexts)
      return { preparation: withRecord(out, { provenance, slot: this.views.slotOf(view) }), provenance }
    }
    if (!this.events.mayHear(PREPARE)) return done(preparation)
    return this.#waterfall(view, PREPARE, preparation, context).then((result) => {
      const late = this.#evaluation.late(view, variablePlan, result.variables, context)
      return late === undefined ? done(result) : done({ ...result, variables: late.values }, late.plan)
    })
  }

  async assemble(context: AssembleContext, preparation?: PromptPreparation): Promise<PromptAssembly> {
    this.#live('assemble()', context)
    if (preparation !== undefined) checkShape(CALLER, preparation, ['contexts'], true)
    this.stats.assemblies++
    const view = this.views.view(context.scope)
    const made =
      preparation === undefined
        ? this.#prepare(view, context, false)
        : { preparation, provenance: recordOf(preparation)?.provenance }
    // A preparation made here with nobody listening was seen by no one: the presentation takes it without a copy.
    const unseen = preparation === undefined && !(made instanceof Promise)
    const prepared = made instanceof Promise ? await made : made
    this.#live('assemble()', context)
    const plan = view.derive('sections')
    if (plan.complete.length > 1) {
      throw new Error(
        `multiple complete prompt sections in ${viewName(view.key)}: ${plan.complete.map(labelOf).join(', ')}; keep one complete section per scope`,
      )
    }
    const collected = this.#evaluation.collect(plan, context)
    const tools = this.#evaluation.tools(view, context)
    const suppressed = view.derive('suppressed')
    const contextPlan = view.derive('contexts')
    const provenance: AssemblyProvenance = {
      scope: view.key,
      sections: plan.sources,
      collected,
      contexts: prepared.provenance?.contexts ?? contextPlan.sources,
      variables: prepared.provenance?.variables ?? view.derive('variables').sources,
      stabilityGuard: this.config.stabilityGuard,
    }
    const slot = this.views.slotOf(view)
    const sections = sectionsOf(plan.entries, collected)
    const complete = plan.complete.length === 1 ? { ...sections[plan.entries.indexOf(plan.complete[0]!)]! } : undefined
    const listening = this.events.mayHear(ASSEMBLE)
    // Required sections (SPEC §5), copied before any listener can touch them.
    const pinned = listening || complete !== undefined ? pinRequired(plan.entries, sections) : undefined
    const { contexts, variables } = prepared.preparation
    const presentation: PromptPresentation = {
      sections,
      contexts: unseen ? contexts : contexts.map((c) => ({ ...c })),
      variables: unseen ? variables : { ...variables },
    }
    const result = listening ? await this.#waterfall(view, ASSEMBLE, presentation, context) : presentation
    this.#live('assemble()', context)
    // The complete section alone, plus the required sections beside it (SPEC §5).
    const required = restoreRequired(complete === undefined ? result.sections : [complete], result.sections, pinned)
    const assembly: PromptAssembly = {
      ...result,
      sections: required.sections,
      contexts: suppressed ? requiredOnly(contextPlan, result.contexts) : result.contexts,
      tools: tools.slice(),
    }
    recordScope(assembly.contexts, view.key, presentation.contexts, result.contexts)
    const restored = required.restored.length === 0 ? provenance : { ...provenance, restored: required.restored }
    return withRecord(assembly, { provenance: restored, slot })
  }

  /** Which contexts were registrations travels on them (`registered: true`), so any copy refreshes like the original. */
  refreshContext<T extends PromptPreparation>(accepted: T, context: AssembleContext): T {
    this.#live('refreshContext()', context, false)
    const known = assembledFor(accepted)
    if (known !== undefined && known.scope !== context.scope) throw wrongScope(known.scope, context.scope)
    const view = this.views.view(context.scope)
    const plan = view.derive('contexts')
    const suppressed = view.derive('suppressed')
    const contexts: AssembledContext[] = []
    for (const item of accepted.contexts) {
      if (item.registered === true) {
        // Re-read while its registration is effective; dropped once it is gone.
        const entry = plan.byName.get(item.name)
        if (entry !== undefined && (!suppressed || entry.required)) contexts.push(this.#evaluation.context(entry, context))
      } else if (!suppressed || plan.byName.get(item.name)?.required) {
        // Only a waterfall listener supplied it: keep the accepted text.
        contexts.push({ ...item })
      }
    }
    const present = new Set(contexts.map((c) => c.name))
    for (const entry of plan.required) if (!present.has(entry.name)) contexts.push(this.#evaluation.context(entry, context))
    recordScope(contexts, view.key)
    const refreshed = { ...accepted, contexts }
    const record = recordOf(accepted)
    return record === undefined ? refreshed : withRecord(refreshed, record)
  }
}
