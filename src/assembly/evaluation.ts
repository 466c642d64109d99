import type { ResolvedSystemPromptConfig } from './config.js'
import { labelOf, SourceKind, type ContextEntry, type SectionEntry, type Source, type ToolEntry, type VariableEntry } from './entries.js'
import { describeValue } from './errors.js'
import { collectTools, sameResults, snapshotOf, ToolDetacher, toolProviderLabel, type ResultSnapshot } from './tools.js'
import type { AssembleContext, AssembledContext, PromptStats, ToolSchema } from './types.js'
import type { ScopeView, SectionPlan, VariablePlan } from './view.js'

/**
 * Reads registered providers for one call, each result type-checked (the error names the entry) and each function call
 * counted in `stats.providerEvaluations`. Collected texts and detached tools are reused while no provider's result changed.
 */
export class Evaluation {
  readonly #detacher = new ToolDetacher()
  readonly #collected = new WeakMap<SectionPlan, readonly string[]>()
  /** The tools last built for a provider list (shared by views without providers of their own), with their results' snapshot. */
  readonly #toolMemos = new WeakMap<readonly ToolEntry[], { snapshot: readonly ResultSnapshot[]; tools: readonly ToolSchema[] }>()

  constructor(
    private readonly stats: PromptStats,
    private readonly config: ResolvedSystemPromptConfig,
  ) {}

  #read(entry: Source<unknown> | ToolEntry, context: AssembleContext): unknown {
    if (entry.kind === SourceKind.Static) return entry.value
    if (entry.kind === SourceKind.Signal) return entry.signal!.value
    this.stats.providerEvaluations++
    return entry.fn!(context)
  }

  /** The current text of a section or context, or (`variable`) a variable's value; a `TypeError` naming the entry otherwise. */
  text(entry: SectionEntry | ContextEntry, context: AssembleContext): string
  text(entry: VariableEntry, context: AssembleContext, variable: true): string | undefined
  text(entry: SectionEntry | ContextEntry | VariableEntry, context: AssembleContext, variable = false): string | undefined {
    const value = this.#read(entry, context)
    if (typeof value === 'string' || (variable && value === undefined)) return value
    const source = entry.kind === SourceKind.Signal ? 'signal holds' : 'provider returned'
    const got = `${labelOf(entry)} ${variable ? '' : 'text '}${source} ${describeValue(value)}`
    throw new TypeError(`${got}; it must be a string${variable ? ' or undefined' : ''}`)
  }

  /**
   * `view`'s current variable plan and a fresh record of its values, each dynamic entry read once in plan order
   * (one a provider registers meanwhile too, as a live iteration would reach it). Throws what `text` throws.
   */
  variables(view: ScopeView, context: AssembleContext): { plan: VariablePlan; values: Record<string, string | undefined> } {
    let plan = view.derive('variables')
    let values = { ...plan.values }
    for (const i of plan.dynamic) values[plan.entries[i]!.name] = this.text(plan.entries[i]!, context, true)
    for (let now = view.derive('variables'); now !== plan; now = view.derive('variables')) {
      const read = new Set(plan.entries)
      const caught: Record<string, string | undefined> = {}
      for (const entry of now.entries) caught[entry.name] = read.has(entry) ? values[entry.name] : this.text(entry, context, true)
      plan = now
      values = caught
    }
    return { plan, values }
  }

  /** `values` plus each variable effective in `view` since `plan`, under names `values` lacks; `undefined` when none. */
  late(view: ScopeView, plan: VariablePlan, values: Readonly<Record<string, string | undefined>>, context: AssembleContext) {
    const now = view.derive('variables')
    if (now === plan) return undefined
    const late = now.entries.filter((entry) => !plan.byName.has(entry.name) && !Object.hasOwn(values, entry.name))
    if (late.length === 0) return undefined
    return { plan: now, values: { ...values, ...Object.fromEntries(late.map((e) => [e.name, this.text(e, context, true)])) } }
  }

  /** A fresh assembled context of `entry`, marked `registered: true`. */
  context(entry: ContextEntry, context: AssembleContext): AssembledContext {
    const text = this.text(entry, context)
    return entry.interpolate
      ? { name: entry.name, text, registered: true }
      : { name: entry.name, text, interpolate: false, registered: true }
  }

  /** `plan`'s section texts by position, dynamic ones read in plan order; read-only: the last array while none changed. */
  collect(plan: SectionPlan, context: AssembleContext): readonly string[] {
    const { entries, dynamic } = plan
    const last = this.#collected.get(plan)
    // Ours to write: a first collect of the plan, or a copy made at its first changed text.
    let texts = last === undefined ? entries.map((entry) => (entry.kind === SourceKind.Static ? entry.value! : '')) : undefined
    for (const i of dynamic) {
      const text = this.text(entries[i]!, context)
      if (texts === undefined) {
        if (last![i] === text) continue
        texts = last!.slice()
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
    const results = entries.map((entry) => this.#read(entry, context))
    const memo = this.#toolMemos.get(entries)
    if (memo !== undefined && sameResults(memo.snapshot, results)) return memo.tools
    const provided = results.map((result, i) => ({ result, label: () => toolProviderLabel(entries, i) }))
    const tools = collectTools(provided, this.config.toolOrder, this.#detacher)
    this.stats.toolClones = this.#detacher.clones
    this.#toolMemos.set(entries, { snapshot: results.map(snapshotOf), tools })
    return tools
  }
}
