import type { ResolvedSystemPromptConfig } from './config.js'
import { labelOf, SourceKind, type ContextEntry, type SectionEntry, type Source, type ToolEntry, type VariableEntry } from './entries.js'
import { describeValue } from './errors.js'
import type { PromptStats } from './stats.js'
import { collectTools, sameResults, snapshotOf, ToolDetacher, toolProviderLabel } from './tools.js'
import type { AssembleContext, AssembledContext, ToolSchema } from './types.js'
import type { ViewCache } from './view-cache.js'
import type { ScopeView, SectionPlan, VariablePlan } from './view.js'

/** A variable plan's record with every static value in place (dynamic ones `undefined`), and the dynamic positions. */
interface VariableTemplate {
  readonly values: Readonly<Record<string, string | undefined>>
  readonly dynamic: readonly number[]
}

function variableTemplateOf(plan: VariablePlan): VariableTemplate {
  const values: Record<string, string | undefined> = {}
  const dynamic: number[] = []
  plan.entries.forEach((entry, i) => {
    if (entry.kind === SourceKind.Static) values[entry.name] = entry.value
    else {
      values[entry.name] = undefined
      dynamic.push(i)
    }
  })
  return { values, dynamic }
}

/**
 * Reads registered providers for one call: section and context texts,
 * variable values and tool results, each checked for its type (the error
 * names the entry) and counted in `stats.providerEvaluations` when a function
 * provider ran. Tools are collected and detached here, and reused while every
 * provider returns what it returned last time.
 */
export class Evaluation {
  readonly #stats: PromptStats
  readonly #config: ResolvedSystemPromptConfig
  readonly #views: ViewCache
  readonly #detacher = new ToolDetacher()
  /** The last texts `collect` returned for each (immutable) plan. */
  readonly #collected = new WeakMap<SectionPlan, readonly string[]>()
  /** Each variable plan's static values and dynamic positions. */
  readonly #variableTemplates = new WeakMap<VariablePlan, VariableTemplate>()

  constructor(stats: PromptStats, config: ResolvedSystemPromptConfig, views: ViewCache) {
    this.#stats = stats
    this.#config = config
    this.#views = views
  }

  #read<T>(entry: Source<T>, context: AssembleContext): unknown {
    if (entry.kind === SourceKind.Static) return entry.value
    if (entry.kind === SourceKind.Signal) return entry.signal!.value
    this.#stats.providerEvaluations++
    return entry.fn!(context)
  }

  /** The current text of a section or context; a `TypeError` naming the entry when it is not a string. */
  text(entry: SectionEntry | ContextEntry, context: AssembleContext): string {
    const text = entry.kind === SourceKind.Static ? entry.value! : this.#read(entry, context)
    if (typeof text === 'string') return text
    throw new TypeError(
      `${labelOf(entry)} text ${entry.kind === SourceKind.Signal ? 'signal holds' : 'provider returned'} ${describeValue(text)}; it must be a string`,
    )
  }

  /** The current value of a variable; a `TypeError` naming it unless a string or `undefined`. */
  variable(entry: VariableEntry, context: AssembleContext): string | undefined {
    const value = this.#read(entry, context)
    if (value === undefined || typeof value === 'string') return value
    throw new TypeError(
      `${labelOf(entry)} ${entry.kind === SourceKind.Signal ? 'signal holds' : 'provider returned'} ${describeValue(value)}; it must be a string or undefined`,
    )
  }

  /**
   * A fresh record of every variable of `plan` by name, in plan order: the
   * static values copied from a per-plan template, then each signal and
   * function entry read in plan order (the same reads, in the same order, as
   * evaluating every entry). Throws what `variable` throws.
   */
  variables(plan: VariablePlan, context: AssembleContext): Record<string, string | undefined> {
    let template = this.#variableTemplates.get(plan)
    if (template === undefined) this.#variableTemplates.set(plan, (template = variableTemplateOf(plan)))
    const out = { ...template.values }
    const { entries } = plan
    const { dynamic } = template
    for (let k = 0; k < dynamic.length; k++) {
      const entry = entries[dynamic[k]!]!
      out[entry.name] = this.variable(entry, context)
    }
    return out
  }

  /**
   * `variables` of `view`'s current plan, and the plan they follow. A
   * variable that a provider registers while they are read is read in this
   * same call, as a live iteration of the registry would reach it; each entry
   * is read once, and the record follows the plan as it stands once no read
   * registers anything more.
   */
  viewVariables(view: ScopeView, context: AssembleContext): { plan: VariablePlan; values: Record<string, string | undefined> } {
    let plan = view.derive('variables')
    let values = this.variables(plan, context)
    for (let now = view.derive('variables'); now !== plan; now = view.derive('variables')) {
      const read = new Set(plan.entries)
      const caught: Record<string, string | undefined> = {}
      for (const entry of now.entries) caught[entry.name] = read.has(entry) ? values[entry.name] : this.variable(entry, context)
      plan = now
      values = caught
    }
    return { plan, values }
  }

  /** A fresh assembled context of `entry`, marked `registered: true`. */
  context(entry: ContextEntry, context: AssembleContext): AssembledContext {
    const text = this.text(entry, context)
    return entry.interpolate
      ? { name: entry.name, text, registered: true }
      : { name: entry.name, text, interpolate: false, registered: true }
  }

  /**
   * The texts of `plan`'s sections by position, as collected now: the plan's
   * static texts, with every signal and function entry read in plan order.
   * Read-only and shared: while every dynamic text equals what the last
   * collect of `plan` read, that same array is returned (the plan's own
   * `texts` when it has no dynamic entry), so a steady step copies nothing.
   */
  collect(plan: SectionPlan, context: AssembleContext): readonly string[] {
    const { entries, dynamic } = plan
    if (dynamic.length === 0) return plan.texts
    const last = this.#collected.get(plan)
    let texts: string[] | undefined
    for (let k = 0; k < dynamic.length; k++) {
      const i = dynamic[k]!
      const text = this.text(entries[i]!, context)
      if (texts === undefined) {
        if (last !== undefined && last[i] === text) continue
        texts = (last ?? plan.texts).slice()
      }
      texts[i] = text
    }
    if (texts === undefined) return last!
    this.#collected.set(plan, texts)
    return texts
  }

  /** The detached, ordered tools of `view`; the same array while no provider's result changed. */
  tools(view: ScopeView, context: AssembleContext): readonly ToolSchema[] {
    const entries = view.derive('tools')
    const results = new Array<unknown>(entries.length)
    for (let i = 0; i < entries.length; i++) results[i] = this.#toolResult(entries[i]!, context)
    const memo = this.#views.toolMemoOf(entries)
    if (memo !== undefined && memo.entries === entries && sameResults(memo.results, memo.snapshot, results)) {
      return memo.tools
    }
    const provided = results.map((result, i) => ({ result, label: toolProviderLabel(entries, i) }))
    const tools = collectTools(provided, this.#config.toolOrder, this.#detacher)
    this.#stats.toolClones = this.#detacher.clones
    this.#views.keepToolMemo(entries, { entries, results, snapshot: results.map(snapshotOf), tools })
    return tools
  }

  #toolResult(entry: ToolEntry, context: AssembleContext): unknown {
    if (entry.kind === SourceKind.Signal) return entry.signal!.value
    this.#stats.providerEvaluations++
    return entry.fn!(context)
  }
}
