import { labelOf, type SectionEntry } from './entries.js'
import { viewName } from './errors.js'
import type { Evaluation } from './evaluation.js'
import type { CordisBridge } from './cordis-internals.js'
import { pinRequired, restoreRequired } from './required-sections.js'
import type { StabilityGuard } from './config.js'
import { assembledFor, recordOf, recordScope, withRecord, type AssemblyProvenance } from './provenance.js'
import type { AssembleContext, AssembledContext, AssembledSection, PromptAssembly, PromptPreparation, PromptPresentation } from './types.js'
import type { ViewCache } from './view-cache.js'
import type { ScopeView } from './view.js'
import { checkWaterfallResult } from './waterfall-result.js'

const PREPARE = 'system-prompt/prepare'
const ASSEMBLE = 'system-prompt/assemble'

/** A preparation with the provenance of its plans (`undefined`: a caller's own preparation). */
interface Prepared {
  readonly preparation: PromptPreparation
  readonly provenance: AssemblyProvenance | undefined
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason
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
 * One step's calls over the views: `prepare` (variables and contexts, then the prepare waterfall),
 * `assemble` (sections and tools, then the assemble waterfall, then the complete section and
 * suppression enforced) and `refreshContext`. Every result is recorded with its provenance and its
 * scope's render slot (see provenance.ts).
 */
export class Pipeline {
  readonly #views: ViewCache
  readonly #evaluation: Evaluation
  readonly #events: CordisBridge
  /** Config `stabilityGuard`, carried in every assembly's provenance for the render to enforce. */
  readonly #stabilityGuard: StabilityGuard

  constructor(views: ViewCache, evaluation: Evaluation, events: CordisBridge, stabilityGuard: StabilityGuard) {
    this.#stabilityGuard = stabilityGuard
    this.#views = views
    this.#evaluation = evaluation
    this.#events = events
  }

  async #waterfall<T extends PromptPreparation | PromptPresentation>(view: ScopeView, name: string, value: T, context: AssembleContext): Promise<T> {
    const result: unknown = await this.#events.waterfall(view.carrier, name, value, context, () => Promise.resolve(value))
    checkWaterfallResult(name, 'sections' in value, result)
    return result as T
  }

  /** See `SystemPrompt.prepare`. */
  async prepare(context: AssembleContext): Promise<PromptPreparation> {
    const prepared = this.#prepare(this.#views.view(context.scope), context, true)
    return (prepared instanceof Promise ? await prepared : prepared).preparation
  }

  /**
   * Prepares for `view`: synchronously when nobody listens to the prepare waterfall, else after it.
   * `recorded`: tie the result to its scope and provenance (not for the preparation `assemble` makes
   * for itself, which is never handed out).
   */
  #prepare(view: ScopeView, context: AssembleContext, recorded: boolean): Prepared | Promise<Prepared> {
    throwIfAborted(context.signal)
    const { plan: variablePlan, values: variables } = this.#evaluation.variables(view, context)
    const contextPlan = view.derive('contexts')
    const registered = view.derive('suppressed') ? contextPlan.required : contextPlan.entries
    const contexts = registered.map((entry) => this.#evaluation.context(entry, context))
    const preparation: PromptPreparation = { variables, contexts }
    const provenance: AssemblyProvenance = { scope: view.key, contexts: contextPlan.sources, variables: variablePlan.sources }
    // The end of a prepare: the abort check, and suppression as of now (a prepare listener may have registered a suppressor).
    const done = (result: PromptPreparation): Prepared => {
      throwIfAborted(context.signal)
      const requiredNames = view.derive('contexts').requiredNames
      const enforced = view.derive('suppressed') ? result.contexts.filter((c) => requiredNames.has(c.name)) : result.contexts
      const out = result === preparation && enforced === result.contexts ? result : { ...result, contexts: enforced }
      if (!recorded) return { preparation: out, provenance }
      // Only an array this call made is tied to the scope (a listener's might be shared).
      if (out.contexts === preparation.contexts || out.contexts !== result.contexts) recordScope(out.contexts, view.key)
      return { preparation: withRecord(out, { provenance, slot: this.#views.slots.slotOf(view) }), provenance }
    }
    return this.#events.mayHear(PREPARE) ? this.#waterfall(view, PREPARE, preparation, context).then(done) : done(preparation)
  }

  /** See `SystemPrompt.assemble`. */
  async assemble(context: AssembleContext, preparation?: PromptPreparation): Promise<PromptAssembly> {
    this.#views.stats.assemblies++
    const view = this.#views.view(context.scope)
    let prepared: Prepared
    // A preparation made here with nobody listening was seen by no one: the presentation takes it without a copy.
    let unseen = false
    if (preparation !== undefined) prepared = { preparation, provenance: recordOf(preparation)?.provenance }
    else {
      const made = this.#prepare(view, context, false)
      unseen = !(made instanceof Promise)
      prepared = unseen ? (made as Prepared) : await made
    }
    throwIfAborted(context.signal)
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
      stabilityGuard: this.#stabilityGuard,
    }
    const slot = this.#views.slots.slotOf(view)
    const sections = sectionsOf(plan.entries, collected)
    const complete = plan.complete.length === 1 ? { ...sections[plan.entries.indexOf(plan.complete[0]!)]! } : undefined
    const listening = this.#events.mayHear(ASSEMBLE)
    // Required sections (SPEC §5), copied before any listener can touch them.
    const pinned = listening || complete !== undefined ? pinRequired(plan.entries, sections) : undefined
    const { contexts, variables } = prepared.preparation
    const presentation: PromptPresentation = {
      sections,
      contexts: unseen ? contexts : contexts.map((c) => ({ ...c })),
      variables: unseen ? variables : { ...variables },
    }
    const result = listening ? await this.#waterfall(view, ASSEMBLE, presentation, context) : presentation
    throwIfAborted(context.signal)
    // The complete section alone, plus the required sections beside it (SPEC §5).
    const required = restoreRequired(complete === undefined ? result.sections : [complete], result.sections, pinned)
    const assembly: PromptAssembly = {
      ...result,
      sections: required.sections,
      contexts: suppressed ? result.contexts.filter((c) => contextPlan.requiredNames.has(c.name)) : result.contexts,
      tools: tools.slice(),
    }
    // Only an array this call made is tied to the scope (a listener's might be shared).
    if (assembly.contexts === presentation.contexts || assembly.contexts !== result.contexts) {
      recordScope(assembly.contexts, view.key)
    }
    const restored = required.restored.length === 0 ? provenance : { ...provenance, restored: required.restored }
    return withRecord(assembly, { provenance: restored, slot })
  }

  /**
   * See `SystemPrompt.refreshContext`. Which contexts were registrations travels on the contexts
   * themselves (`registered: true`), so a refreshed result or any copy refreshes like the original.
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
