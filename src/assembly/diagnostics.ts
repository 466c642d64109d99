/**
 * Reactive diagnostics (SPEC §5): the render errors a scope's registry would
 * meet, found before the first step. For every effective section and
 * (unsuppressed) runtime context whose text is a string or a signal: each
 * malformed reference, each reference to an unknown variable, each reference
 * to a variable whose static or signal value is `undefined`, and, for a
 * section, each stability-guard hazard, each `cacheBreakpoint` that can
 * get no marker (ordered at or after a volatile section) and each scoped
 * section that splits the prefix shared with sibling agents (ordered before a
 * non-empty global section). Messages are built by the same
 * builders as the render errors they predict.
 *
 * No function provider is ever called: a function text cannot be checked
 * (listed as `'unchecked'` on request), and a variable with a function
 * provider has a value unknown until assembly, so it is never 'no-value'.
 *
 * Memoized in the signal graph, one computed per view over the view's plans
 * (and one per signal text, over its signal):
 *
 *     sections ─┐
 *     contexts ─┼─▶ diagnostics of the view ─▶ checked (no 'unchecked')
 *     variables ┤        ▲
 *     suppressed┘   signal texts' scans, signal variables' values
 *
 * An unchanged registry returns the same frozen array; so does a change that
 * leaves the findings equal.
 */

import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import { labelOf, layerOf, SourceKind, type ContextEntry, type LayerRef, type SectionEntry } from './entries.js'
import { describeValue } from './errors.js'
import { volatileReferenceMessage, type StabilityGuard } from './stability-hazard.js'
import { malformedReference, missingValue, scanGroups, unknownVariable, type TemplateGroup } from './template.js'
import type { ScopeView, VariablePlan } from './view.js'
import { breakpointFindings, sharedPrefixFindings } from './order-findings.js'

export { breakpointAfterVolatileMessage } from './order-findings.js'

/** What a diagnostic found. */
export type PromptDiagnosticKind =
  | 'malformed'
  | 'unknown-variable'
  | 'no-value'
  | 'volatile-in-section'
  | 'breakpoint-after-volatile'
  | 'shared-prefix-split'
  | 'unchecked'

/** One finding of `systemPrompt.diagnostics()`. */
export interface PromptDiagnostic {
  /**
   * `'malformed'`: a group like `{{ x }}`; `'unknown-variable'`: no effective
   * variable has the name; `'no-value'`: the variable's static or signal value
   * is `undefined`; `'volatile-in-section'`: a section not declared volatile
   * references a `stability: 'volatile'` variable (config `stabilityGuard`);
   * `'breakpoint-after-volatile'`: a `cacheBreakpoint` section ordered at or
   * after a volatile section, where no cache marker is ever placed;
   * `'shared-prefix-split'`: a section supplied by a scope layer ordered before
   * a global section whose text is not empty, so the global sections after it
   * leave the prefix this agent shares with its siblings;
   * `'unchecked'` (only with `includeUnchecked`): the text is a function.
   */
  readonly kind: PromptDiagnosticKind
  /** The section's or runtime context's name. */
  readonly entry: string
  /** Whether `entry` is a prompt section or a runtime context. */
  readonly entryKind: 'section' | 'context'
  /** The layer that supplies the entry: `'global'` or its scope key. */
  readonly layer: LayerRef
  /** The referenced variable (absent for `'malformed'`, `'breakpoint-after-volatile'`, `'shared-prefix-split'` and `'unchecked'`). */
  readonly variable?: string
  /** For `'shared-prefix-split'`: the first non-empty global section that `entry` is ordered before. */
  readonly before?: string
  /** What the render would say (the render error's own wording), or why the entry is unchecked. */
  readonly message: string
}

/** Options of `systemPrompt.diagnostics()`. */
export interface DiagnosticsOptions {
  /** Also list every section and context whose text is a function, as `kind: 'unchecked'`. Default `false`. */
  readonly includeUnchecked?: boolean
}

type TextEntry = SectionEntry | ContextEntry

const NO_GROUPS: readonly TemplateGroup[] = Object.freeze([])

/** The template groups of entries' texts, scanned once per entry (a signal text once per value). */
type Scans = WeakMap<TextEntry, readonly TemplateGroup[] | ReadonlySignal<readonly TemplateGroup[] | undefined>>

/**
 * The groups of an entry's text; `undefined` when it cannot be read without
 * calling a provider (a function), or its signal throws or holds a non-string
 * (`prepare` reports that one).
 */
function groupsOf(entry: TextEntry, scans: Scans): readonly TemplateGroup[] | undefined {
  if (entry.kind === SourceKind.Provider) return undefined
  if (!entry.interpolate) return NO_GROUPS
  let scan = scans.get(entry)
  if (scan === undefined) {
    const source = entry.signal
    scan =
      source === undefined
        ? scanGroups(entry.value!)
        : computed(() => {
            let text: unknown
            try {
              text = source.value
            } catch {
              // A throwing signal: `prepare` reports it; caught here so no error is cached.
              return undefined
            }
            return typeof text === 'string' ? scanGroups(text) : undefined
          })
    scans.set(entry, scan)
  }
  return Array.isArray(scan) ? scan : (scan as ReadonlySignal<readonly TemplateGroup[] | undefined>).value
}

/** Whether the variable's value is known to be `undefined` now (a signal holding it), reading no provider. */
function hasNoValue(plan: VariablePlan, name: string): boolean {
  const variable = plan.byName.get(name)!
  if (variable.kind !== SourceKind.Signal) return false
  try {
    return variable.signal!.value === undefined
  } catch {
    return false
  }
}

/** The variables record the unknown-variable message lists. */
function namesRecordOf(plan: VariablePlan): Readonly<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of plan.entries) out[entry.name] = ''
  return out
}

function findingsOf(entry: TextEntry, entryKind: 'section' | 'context', plan: VariablePlan, guard: StabilityGuard, scans: Scans, out: PromptDiagnostic[]): void {
  const layer = layerOf(entry.scope)
  const groups = groupsOf(entry, scans)
  const owner = labelOf(entry)
  const push = (kind: PromptDiagnosticKind, variable: string | undefined, message: string): void => {
    out.push(Object.freeze(variable === undefined ? { kind, entry: entry.name, entryKind, layer, message } : { kind, entry: entry.name, entryKind, layer, variable, message }))
  }
  if (groups === undefined) {
    if (entry.kind === SourceKind.Provider) {
      push('unchecked', undefined, `${owner} text is a function provider, so its references are checked only when it renders (diagnostics never call providers)`)
    }
    return
  }
  const seen = new Set<string>()
  const once = (key: string): boolean => {
    if (seen.has(key)) return false
    seen.add(key)
    return true
  }
  const volatileSection = entryKind === 'section' && entry.stability !== 'volatile'
  for (const group of groups) {
    if (group.malformed !== undefined) {
      if (once(`m${group.malformed}`)) push('malformed', undefined, malformedReference(group.malformed, owner).message)
      continue
    }
    const { name } = group
    const variable = plan.byName.get(name)
    if (variable === undefined) {
      if (once(`u${name}`)) push('unknown-variable', name, unknownVariable(name, namesRecordOf(plan), owner).message)
      continue
    }
    if (hasNoValue(plan, name) && once(`n${name}`)) push('no-value', name, missingValue(name, owner).message)
    if (volatileSection && variable.stability === 'volatile' && once(`v${name}`)) {
      push('volatile-in-section', name, volatileReferenceMessage(guard, entry.name, layer, name, layerOf(variable.scope)))
    }
  }
}

function sameDiagnostics(a: readonly PromptDiagnostic[], b: readonly PromptDiagnostic[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (
      x.kind !== y.kind ||
      x.entry !== y.entry ||
      x.entryKind !== y.entryKind ||
      x.layer !== y.layer ||
      x.variable !== y.variable ||
      x.before !== y.before ||
      x.message !== y.message
    ) {
      return false
    }
  }
  return true
}

/** The two memoized lists of one view. */
interface ViewDiagnostics {
  /** Every finding, `'unchecked'` ones included. */
  readonly all: ReadonlySignal<readonly PromptDiagnostic[]>
  /** Without the `'unchecked'` ones. */
  readonly checked: ReadonlySignal<readonly PromptDiagnostic[]>
}

/** One service's diagnostics (see the module comment): each view's memo, and each entry's scan. */
export class Diagnostics {
  readonly #guard: StabilityGuard
  readonly #memos = new WeakMap<ScopeView, ViewDiagnostics>()
  readonly #scans: Scans = new WeakMap()

  /** `guard` words the stability hazards after the service's config. */
  constructor(guard: StabilityGuard) {
    this.#guard = guard
  }

  #memoOf(view: ScopeView): ViewDiagnostics {
    let memo = this.#memos.get(view)
    if (memo !== undefined) return memo
    const guard = this.#guard
    const scans = this.#scans
    let lastAll: readonly PromptDiagnostic[] = Object.freeze([])
    let lastChecked: readonly PromptDiagnostic[] = lastAll
    const all = computed(() => {
      const variables = view.variables.value
      const out: PromptDiagnostic[] = []
      const sections = view.sections.value.entries
      for (const entry of sections) findingsOf(entry, 'section', variables, guard, scans, out)
      breakpointFindings(sections, out)
      sharedPrefixFindings(sections, out)
      const contexts = view.contexts.value
      for (const entry of view.suppressed.value ? contexts.required : contexts.entries) findingsOf(entry, 'context', variables, guard, scans, out)
      if (!sameDiagnostics(out, lastAll)) lastAll = Object.freeze(out)
      return lastAll
    })
    const checked = computed(() => {
      const found = all.value.filter((d) => d.kind !== 'unchecked')
      if (!sameDiagnostics(found, lastChecked)) lastChecked = Object.freeze(found)
      return lastChecked
    })
    this.#memos.set(view, (memo = { all, checked }))
    return memo
  }

  /**
   * The diagnostics of `view`: the same frozen array while the findings stay
   * equal. Throws a `TypeError` for a non-boolean `includeUnchecked`.
   */
  of(view: ScopeView, options: DiagnosticsOptions = {}): readonly PromptDiagnostic[] {
    const includeUnchecked = options?.includeUnchecked
    if (includeUnchecked !== undefined && typeof includeUnchecked !== 'boolean') {
      throw new TypeError(`diagnostics option "includeUnchecked" must be a boolean (got ${describeValue(includeUnchecked)})`)
    }
    // Derived first, so the memo's computeds find these facts fresh whatever the chain's depth.
    view.derive('variables')
    view.derive('sections')
    view.derive('contexts')
    view.derive('suppressed')
    const memo = this.#memoOf(view)
    // Untracked, like `derive`: a caller's effect must not subscribe to the view's chain.
    return untracked(() => (includeUnchecked === true ? memo.all.value : memo.checked.value))
  }
}
