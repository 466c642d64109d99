/*
 * Reactive diagnostics (SPEC §5): the render errors and cache hazards a scope's registry would meet,
 * found before the first step, worded by the same builders as the errors they predict. Only string
 * and signal texts are checked: no function provider is ever called, so a function text is
 * 'unchecked' and a variable with a function provider is never 'no-value'.
 *
 * One computed per view over the view's plans (and one scan per signal text, over its signal):
 *
 *     sections ─┐
 *     contexts ─┼─▶ diagnostics of the view ─▶ checked (no 'unchecked')
 *     variables ┤        ▲
 *     suppressed┘   signal texts' scans, signal variables' values
 */

import { computed, untracked, type ReadonlySignal } from '@preact/signals-core'
import { labelOf, layerOf, SourceKind, type ContextEntry, type LayerRef, type SectionEntry } from './entries.js'
import { entryLabel, layerPhrase, optionError } from './errors.js'
import type { StabilityGuard } from './config.js'
import { malformedReference, scanGroups, unknownVariable, valueError, type TemplateGroup } from './template.js'
import type { ScopeView, VariablePlan } from './view.js'

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
   * `'malformed'`: a group like `{{ x }}`; `'unknown-variable'`: no effective variable has the name;
   * `'no-value'`: the variable's static or signal value is `undefined`; `'volatile-in-section'`: a
   * section not declared volatile references a volatile variable (config `stabilityGuard`);
   * `'breakpoint-after-volatile'`: a `cacheBreakpoint` section at or after a volatile one gets no
   * cache marker; `'shared-prefix-split'`: a scoped section ordered before a non-empty global section,
   * which leaves the prefix shared with sibling agents; `'unchecked'` (on request): a function text.
   */
  readonly kind: PromptDiagnosticKind
  /** The section's or runtime context's name. */
  readonly entry: string
  readonly entryKind: 'section' | 'context'
  /** The layer that supplies the entry: `'global'` or its scope key. */
  readonly layer: LayerRef
  /** The referenced variable (only for `'unknown-variable'`, `'no-value'` and `'volatile-in-section'`). */
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
/** An entry's layer, `undefined` when unknown. */
type Layer = LayerRef | undefined

const NO_GROUPS: readonly TemplateGroup[] = Object.freeze([])
const THREW = Symbol('threw')

/** The template groups of entries' texts, scanned once per entry (a signal text once per value). */
type Scans = WeakMap<TextEntry, readonly TemplateGroup[] | ReadonlySignal<readonly TemplateGroup[] | undefined>>

/** A signal's value, or `THREW`: a throwing signal is `prepare`'s to report, and no error is cached here. */
function read(signal: ReadonlySignal<unknown>): unknown {
  try {
    return signal.value
  } catch {
    return THREW
  }
}

/** The groups of a string or signal text; `undefined` for a signal that throws or holds a non-string. */
function groupsOf(entry: TextEntry, scans: Scans): readonly TemplateGroup[] | undefined {
  if (!entry.interpolate) return NO_GROUPS
  let scan = scans.get(entry)
  if (scan === undefined) {
    const source = entry.signal
    const scanned = (text: unknown) => (typeof text === 'string' ? scanGroups(text) : undefined)
    scan = source === undefined ? scanGroups(entry.value!) : computed(() => scanned(read(source)))
    scans.set(entry, scan)
  }
  return Array.isArray(scan) ? scan : (scan as ReadonlySignal<readonly TemplateGroup[] | undefined>).value
}

function findingsOf(entry: TextEntry, entryKind: 'section' | 'context', plan: VariablePlan, guard: StabilityGuard, scans: Scans, out: PromptDiagnostic[]): void {
  const layer = layerOf(entry.scope)
  const push = (kind: PromptDiagnosticKind, variable: string | undefined, message: string): void => {
    const named = variable === undefined ? {} : { variable }
    out.push(Object.freeze({ kind, entry: entry.name, entryKind, layer, ...named, message }))
  }
  if (entry.kind === SourceKind.Provider) {
    const why = 'so its references are checked only when it renders (diagnostics never call providers)'
    return push('unchecked', undefined, `${labelOf(entry)} text is a function provider, ${why}`)
  }
  const seen = new Set<string>()
  /** True the first time `key` is seen in this entry. */
  const once = (key: string): boolean => seen.size < seen.add(key).size
  const volatileSection = entryKind === 'section' && entry.stability !== 'volatile'
  for (const group of groupsOf(entry, scans) ?? NO_GROUPS) {
    if (group.malformed !== undefined) {
      if (once(`m${group.malformed}`)) push('malformed', undefined, malformedReference(group.malformed, labelOf(entry)).message)
      continue
    }
    const { name } = group
    const variable = plan.byName.get(name)
    if (variable === undefined) {
      if (once(`u${name}`)) {
        const names = Object.fromEntries(plan.entries.map((v) => [v.name, '']))
        push('unknown-variable', name, unknownVariable(name, names, labelOf(entry)).message)
      }
      continue
    }
    const noValue = variable.kind === SourceKind.Signal && read(variable.signal!) === undefined
    if (noValue && once(`n${name}`)) push('no-value', name, valueError(name, undefined, labelOf(entry)).message)
    if (volatileSection && variable.stability === 'volatile' && once(`v${name}`)) {
      push('volatile-in-section', name, volatileReferenceMessage(guard, entry.name, layer, name, layerOf(variable.scope)))
    }
  }
}

/** The stability-guard hazard (SPEC §5): `section` references volatile `variable` (each with its layer); what `guard` does. */
function volatileReferenceMessage(guard: StabilityGuard, section: string, layer: Layer, variable: string, variableLayer: Layer) {
  const consequence =
    guard === 'error'
      ? "which config stabilityGuard 'error' forbids"
      : "which the step surface warns about (config stabilityGuard 'warn'; 'error' makes it fail the render)"
  const where = variableLayer === undefined ? '' : ` ${layerPhrase(variableLayer)}`
  return (
    `${entryLabel('prompt section', section, layer)} references volatile prompt variable "${variable}"${where}, ${consequence}: ` +
    'a value that changes every step invalidates the cached prompt from this section on; ' +
    'move it into a runtime context (systemPrompt.context()), or into a tail section registered with ' +
    "stability: 'volatile'"
  )
}

/** The hazard as the `Error` a render throws under `stabilityGuard: 'error'`. */
export function volatileReferenceError(section: string, sectionLayer: Layer, variable: string, variableLayer: Layer): Error {
  return new Error(volatileReferenceMessage('error', section, sectionLayer, variable, variableLayer))
}

/** Why a `cacheBreakpoint` section at or after the first volatile one gets no cache marker (SPEC §4.1). */
export function breakpointAfterVolatileMessage(section: string, layer: Layer, volatile: string, volatileLayer: Layer): string {
  const marked = entryLabel('prompt section', section, layer)
  const at = section === volatile ? 'is itself volatile' : `is ordered after volatile ${entryLabel('prompt section', volatile, volatileLayer)}`
  return `${marked} has cacheBreakpoint: true but ${at}; no cache marker is placed at or after volatile text (that prefix changes every step, so a marker could only pay for cache writes) — order it before the volatile section, or move the per-step text into a runtime context`
}

/** A `'breakpoint-after-volatile'` finding for every `cacheBreakpoint` entry at or after the first volatile one. */
function breakpointFindings(entries: readonly SectionEntry[], out: PromptDiagnostic[]): void {
  const first = entries.findIndex((entry) => entry.stability === 'volatile')
  if (first === -1) return
  const volatile = entries[first]!
  for (const entry of entries.slice(first)) {
    if (!entry.cacheBreakpoint) continue
    const layer = layerOf(entry.scope)
    const message = breakpointAfterVolatileMessage(entry.name, layer, volatile.name, layerOf(volatile.scope))
    out.push(Object.freeze({ kind: 'breakpoint-after-volatile', entry: entry.name, entryKind: 'section', layer, message }))
  }
}

/** A `'shared-prefix-split'` finding for every scoped section ordered before a non-empty global one, naming the first. */
function sharedPrefixFindings(entries: readonly SectionEntry[], out: PromptDiagnostic[]): void {
  let before: SectionEntry | undefined
  const found: PromptDiagnostic[] = []
  for (const entry of entries.toReversed()) {
    if (entry.scope === undefined) {
      // A function text is never known to be empty, nor is a throwing signal's.
      const empty =
        entry.kind === SourceKind.Static ? entry.value === '' : entry.kind === SourceKind.Signal && read(entry.signal!) === ''
      if (!empty) before = entry
      continue
    }
    if (before === undefined) continue
    const layer = layerOf(entry.scope)
    const message =
      `${entryLabel('prompt section', entry.name, layer)} is ordered before global prompt section "${before.name}", so every global section from there on ` +
      `is no longer part of a prefix this agent shares with its siblings (their cached prefix ends where this section starts) — ` +
      `order it after the global sections (e.g. at SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX or later), or register it globally`
    found.push(Object.freeze({ kind: 'shared-prefix-split', entry: entry.name, entryKind: 'section', layer, before: before.name, message }))
  }
  out.push(...found.reverse())
}

const FIELDS = ['kind', 'entry', 'entryKind', 'layer', 'variable', 'before', 'message'] as const
const NONE: readonly PromptDiagnostic[] = Object.freeze([])

/** A computed of `find`'s findings that holds the same frozen array while they stay equal field by field. */
function findings(find: () => PromptDiagnostic[]): ReadonlySignal<readonly PromptDiagnostic[]> {
  let last = NONE
  return computed(() => {
    const found = find()
    const same = found.length === last.length && found.every((x, i) => FIELDS.every((field) => x[field] === last[i]![field]))
    if (!same) last = Object.freeze(found)
    return last
  })
}

/** One service's diagnostics: each view's memo (every finding, and the checked ones), and each entry's scan. */
export class Diagnostics {
  readonly #memos = new WeakMap<ScopeView, { all: ReadonlySignal<readonly PromptDiagnostic[]>; checked: ReadonlySignal<readonly PromptDiagnostic[]> }>()
  readonly #scans: Scans = new WeakMap()

  /** `guard` words the stability hazards after the service's config. */
  constructor(private readonly guard: StabilityGuard) {}

  /** The diagnostics of `view`: the same frozen array while the findings stay equal. Throws a `TypeError` for a non-boolean `includeUnchecked`. */
  of(view: ScopeView, options: DiagnosticsOptions = {}): readonly PromptDiagnostic[] {
    const includeUnchecked = options?.includeUnchecked
    if (includeUnchecked !== undefined && typeof includeUnchecked !== 'boolean') {
      throw optionError('diagnostics', 'includeUnchecked', 'a boolean', includeUnchecked)
    }
    // Derived first, so the memo's computeds find these facts fresh whatever the chain's depth.
    for (const fact of ['variables', 'sections', 'contexts', 'suppressed'] as const) view.derive(fact)
    let memo = this.#memos.get(view)
    if (memo === undefined) {
      const all = findings(() => {
        const variables = view.variables.value
        const out: PromptDiagnostic[] = []
        const sections = view.sections.value.entries
        for (const entry of sections) findingsOf(entry, 'section', variables, this.guard, this.#scans, out)
        breakpointFindings(sections, out)
        sharedPrefixFindings(sections, out)
        const contexts = view.contexts.value
        const effective = view.suppressed.value ? contexts.required : contexts.entries
        for (const entry of effective) findingsOf(entry, 'context', variables, this.guard, this.#scans, out)
        return out
      })
      const checked = findings(() => all.value.filter((d) => d.kind !== 'unchecked'))
      this.#memos.set(view, (memo = { all, checked }))
    }
    // Untracked, like `derive`: a caller's effect must not subscribe to the view's chain.
    return untracked(() => (includeUnchecked === true ? memo.all.value : memo.checked.value))
  }
}
