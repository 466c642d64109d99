import { scopeLabel, type ScopeKey } from '../scope/scope-key.js'
import { labelOf } from './entries.js'
import type { Evaluation } from './evaluation.js'
import { assembledFor, namedSourcesOf, recordOf, recordScope, sectionSourcesOf, withRecord, type AssemblyProvenance } from './provenance.js'
import type { PromptStats } from './stats.js'
import type { AssembleContext, AssembledContext, PromptAssembly, PromptPreparation, PromptPresentation } from './types.js'
import type { ViewCache } from './view-cache.js'
import type { ScopeView } from './view.js'
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
 * One step's calls over the views: `prepare` (variables and contexts, then
 * the prepare waterfall), `assemble` (sections and tools, then the assemble
 * waterfall, then the complete section and suppression enforced) and
 * `refreshContext`. Every result carries its provenance and its scope's
 * render slot (see provenance.ts).
 */
export class Pipeline {
  readonly #stats: PromptStats
  readonly #views: ViewCache
  readonly #evaluation: Evaluation
  readonly #events: EventDispatcher

  constructor(stats: PromptStats, views: ViewCache, evaluation: Evaluation, events: EventDispatcher) {
    this.#stats = stats
    this.#views = views
    this.#evaluation = evaluation
    this.#events = events
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

  /** See `SystemPrompt.prepare`. */
  async prepare(context: AssembleContext): Promise<PromptPreparation> {
    const view = this.#views.view(context.scope)
    throwIfAborted(context.signal)
    const evaluation = this.#evaluation
    const variables: Record<string, string | undefined> = {}
    const variablePlan = view.derive('variables')
    for (const entry of variablePlan.entries) variables[entry.name] = evaluation.variable(entry, context)
    const contextPlan = view.derive('contexts')
    const suppressed = view.derive('suppressed')
    const registered = suppressed ? contextPlan.required : contextPlan.entries
    const contexts = registered.map((entry) => evaluation.context(entry, context))
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
    return withRecord(out, { provenance, slot: this.#views.slotOf(view) })
  }

  /** See `SystemPrompt.assemble`. */
  async assemble(context: AssembleContext, preparation?: PromptPreparation): Promise<PromptAssembly> {
    this.#stats.assemblies++
    const view = this.#views.view(context.scope)
    const prepared = preparation ?? (await this.prepare(context))
    throwIfAborted(context.signal)
    const plan = view.derive('sections')
    if (plan.complete.length > 1) {
      throw new Error(
        `multiple complete prompt sections in ${viewName(view.key)}: ${plan.complete.map(labelOf).join(', ')}; keep one complete section per scope`,
      )
    }
    const collected = new Array<string>(plan.entries.length)
    const sections = this.#evaluation.sections(plan, context, collected)
    const tools = this.#evaluation.tools(view, context)
    const complete = plan.complete.length === 1 ? { ...sections[plan.entries.indexOf(plan.complete[0]!)]! } : undefined
    const suppressed = view.derive('suppressed')
    const requiredNames = view.derive('contexts').requiredNames
    const presentation: PromptPresentation = {
      sections,
      contexts: prepared.contexts.map((c) => ({ ...c })),
      variables: { ...prepared.variables },
    }
    const result = await this.#waterfall(view, 'system-prompt/assemble', presentation, context)
    throwIfAborted(context.signal)
    const assembly: PromptAssembly = {
      ...result,
      sections: complete === undefined ? result.sections : [complete],
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
    }
    return withRecord(assembly, { provenance, slot: this.#views.slotOf(view) })
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
    const view = this.#views.view(context.scope)
    const plan = view.derive('contexts')
    const suppressed = view.derive('suppressed')
    const evaluation = this.#evaluation
    const contexts: AssembledContext[] = []
    for (const item of accepted.contexts) {
      if (item.registered === true) {
        // Re-read while its registration is effective; dropped once it is gone.
        const entry = plan.byName.get(item.name)
        if (entry !== undefined && (!suppressed || entry.required)) contexts.push(evaluation.context(entry, context))
      } else if (!suppressed || plan.requiredNames.has(item.name)) {
        // Only a waterfall listener supplied it: keep the accepted text.
        contexts.push({ ...item })
      }
    }
    const present = new Set(contexts.map((c) => c.name))
    for (const entry of plan.required) if (!present.has(entry.name)) contexts.push(evaluation.context(entry, context))
    recordScope(contexts, view.key)
    const refreshed = { ...accepted, contexts }
    const record = recordOf(accepted)
    return record === undefined ? refreshed : withRecord(refreshed, record)
  }
}
