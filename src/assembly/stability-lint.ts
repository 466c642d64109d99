/**
 * The cache-stability lint of the step surface. A value that changes every
 * step belongs in a runtime context: inside the system prompt it invalidates
 * the KV cache from its section on. Layers come from the assembly's hidden
 * meta, so only `assemble()` results carry them.
 */

import { labelOf, type LayerRef, type SectionEntry } from './entries.js'
import { metaOf } from './meta.js'
import type { RenderedPromptSection } from './render.js'
import type { SectionPlan } from './view.js'

/** A cache-stability lint finding. */
export interface StabilityWarning {
  /**
   * `'volatile-variable'`: a section references a variable registered with
   * `stability: 'volatile'`. `'unstable-section'`: a section's output changed
   * in two consecutive steps while a later non-empty section stayed the same.
   */
  readonly kind: 'volatile-variable' | 'unstable-section'
  /** The section the finding is about. */
  readonly section: string
  /** The layer that supplied the section: `'global'` or its scope key; absent when unknown (no `assemble()` meta, or a listener-made section). */
  readonly layer?: LayerRef
  /** The volatile variable (`'volatile-variable'` only). */
  readonly variable?: string
  /** A human-readable explanation with the remedy. */
  readonly message: string
}

/** A finding not yet committed to the surface's reported set. */
export interface PendingWarning {
  readonly key: string
  readonly layer: LayerRef | undefined
  readonly warning: StabilityWarning
}

/** Which findings a surface already reported, per layer, without retaining scope keys. */
export class ReportedWarnings {
  /** Keys of findings whose layer is `'global'` (prefixed `g`) or unknown (prefixed `u`). */
  readonly #unscoped = new Set<string>()
  readonly #scoped = new WeakMap<object, Set<string>>()

  has(layer: LayerRef | undefined, key: string): boolean {
    if (typeof layer !== 'object') return this.#unscoped.has(unscopedKey(layer, key))
    return this.#scoped.get(layer)?.has(key) === true
  }

  commit(pending: readonly PendingWarning[]): void {
    for (const { layer, key } of pending) {
      if (typeof layer !== 'object') {
        this.#unscoped.add(unscopedKey(layer, key))
        continue
      }
      let set = this.#scoped.get(layer)
      if (set === undefined) this.#scoped.set(layer, (set = new Set()))
      set.add(key)
    }
  }
}

function unscopedKey(layer: 'global' | undefined, key: string): string {
  return (layer === undefined ? 'u' : 'g') + key
}

const sectionIndexes = new WeakMap<SectionPlan, Map<string, SectionEntry>>()

function sectionEntriesOf(plan: SectionPlan | undefined): Map<string, SectionEntry> | undefined {
  if (plan === undefined) return undefined
  let index = sectionIndexes.get(plan)
  if (index === undefined) {
    index = new Map(plan.entries.map((entry) => [entry.name, entry]))
    sectionIndexes.set(plan, index)
  }
  return index
}

/**
 * (a) every section referencing a `volatile` variable; (b) every section that
 * changed in this step and the previous one while some non-empty section
 * after it stayed the same in both. Findings already reported are left out.
 */
export function lintStability(
  assembly: object,
  sections: readonly RenderedPromptSection[],
  changed: ReadonlySet<string>,
  changedBefore: ReadonlySet<string> | undefined,
  reported: ReportedWarnings,
): PendingWarning[] {
  const meta = metaOf(assembly)
  const entries = sectionEntriesOf(meta?.sections)
  const variables = meta?.variables?.byName
  const out: PendingWarning[] = []
  const add = (kind: StabilityWarning['kind'], section: string, variable: string | undefined, message: (label: string) => string) => {
    const entry = entries?.get(section)
    const layer: LayerRef | undefined = entry === undefined ? undefined : (entry.scope ?? 'global')
    const key = `${kind}\0${section}\0${variable ?? ''}`
    if (reported.has(layer, key) || out.some((p) => p.key === key && p.layer === layer)) return
    const label = entry === undefined ? `prompt section "${section}"` : labelOf(entry)
    const warning: StabilityWarning = {
      kind,
      section,
      ...(layer === undefined ? {} : { layer }),
      ...(variable === undefined ? {} : { variable }),
      message: message(label),
    }
    out.push({ key, layer, warning })
  }

  if (variables !== undefined) {
    for (const { name, template } of sections) {
      if (template === undefined) continue
      for (const ref of new Set(template.refs)) {
        const variable = variables.get(ref)
        if (variable?.stability !== 'volatile') continue
        add('volatile-variable', name, ref, (label) =>
          `${label} references volatile ${labelOf(variable)}; a value that changes every step invalidates the cached prompt from this section on — move it into a runtime context`,
        )
      }
    }
  }

  if (changedBefore !== undefined && changedBefore.size > 0 && changed.size > 0) {
    const flagged: string[] = []
    let stableAfter = false
    for (let j = sections.length - 1; j >= 0; j--) {
      const { name, output } = sections[j]!
      if (changed.has(name) && changedBefore.has(name)) {
        if (stableAfter) flagged.push(name)
      } else if (output !== '' && !changed.has(name) && !changedBefore.has(name)) {
        stableAfter = true
      }
    }
    for (const name of flagged.reverse()) {
      add('unstable-section', name, undefined, (label) =>
        `${label} changed in two consecutive steps while later sections stayed the same; a per-step value this early in the prompt invalidates the cache of everything after it — move it into a runtime context or give the section a later order`,
      )
    }
  }
  return out
}
