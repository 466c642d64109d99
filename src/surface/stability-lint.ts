/** The step surface's cache-stability lint: a per-step value in the system prompt invalidates the KV cache from its section on. */

import { breakpointAfterVolatileMessage } from '../assembly/diagnostics.js'
import type { LayerRef } from '../assembly/entries.js'
import { entryLabel } from '../assembly/errors.js'
import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'

/** A cache-stability lint finding. */
export interface StabilityWarning {
  /**
   * `'volatile-variable'`: a section references a `stability: 'volatile'` variable.
   * `'unstable-section'`: a section changed in two consecutive steps while a later non-empty one stayed the same.
   * `'required-restored'`: a listener dropped, edited or reordered a `required` section and the assembly restored it.
   * `'breakpoint-after-volatile'`: a `cacheBreakpoint` section at or after the first volatile one (SPEC §4.1).
   */
  readonly kind: 'volatile-variable' | 'unstable-section' | 'required-restored' | 'breakpoint-after-volatile'
  /** The section the finding is about. */
  readonly section: string
  /** The layer that supplied the section: `'global'` or its scope key; absent when unknown (no `assemble()` provenance, or a listener-made section). */
  readonly layer?: LayerRef
  /** The volatile variable (`'volatile-variable'` only). */
  readonly variable?: string
  /** A human-readable explanation with the remedy. */
  readonly message: string
}

const GLOBAL_LAYER = {}
const UNKNOWN_LAYER = {}

/** Which findings a surface already reported, per layer, without retaining scope keys. */
export class ReportedWarnings {
  readonly #byLayer = new WeakMap<object, Set<string>>()

  has(warning: Omit<StabilityWarning, 'message'>): boolean {
    return this.#byLayer.get(layerKey(warning))?.has(findingKey(warning)) === true
  }

  commit(warnings: readonly StabilityWarning[]): void {
    for (const warning of warnings) {
      const key = layerKey(warning)
      const keys = this.#byLayer.get(key) ?? new Set<string>()
      this.#byLayer.set(key, keys.add(findingKey(warning)))
    }
  }
}

function layerKey({ layer }: Omit<StabilityWarning, 'message'>): object {
  return layer === 'global' ? GLOBAL_LAYER : (layer ?? UNKNOWN_LAYER)
}

function findingKey({ kind, section, variable }: Omit<StabilityWarning, 'message'>): string {
  return `${kind}\0${section}\0${variable ?? ''}`
}

/** The step's findings of each `StabilityWarning.kind`, each once, that `reported` does not hold yet. */
export function lintStability(
  rendered: RenderedPrompt,
  changed: ReadonlySet<string>,
  changedBefore: ReadonlySet<string> | undefined,
  reported: ReportedWarnings,
): StabilityWarning[] {
  const { parts } = rendered
  const out: StabilityWarning[] = []
  const add = (kind: StabilityWarning['kind'], part: RenderedPart, variable: string | undefined, message: () => string): void => {
    const { name: section, layer } = part
    // The message labels the layer's scope key: it is built only for a warning this step reports.
    const found = { kind, section, ...(layer && { layer }), ...(variable === undefined ? {} : { variable }) }
    if (reported.has(found) || out.some((seen) => seen.layer === layer && findingKey(seen) === findingKey(found))) return
    out.push({ ...found, message: message() })
  }

  const volatile = rendered.variables.filter((variable) => variable.stability === 'volatile')
  for (const part of parts.filter(({ stability }) => stability !== 'volatile')) {
    for (const variable of volatile.filter(({ name }) => part.variables.includes(name))) {
      const message = () => `${entryLabel('prompt section', part.name, part.layer)} references volatile ${entryLabel('prompt variable', variable.name, variable.layer)}; a value that changes every step invalidates the cached prompt from this section on — move it into a runtime context`
      add('volatile-variable', part, variable.name, message)
    }
  }

  const firstVolatile = parts.findIndex((part) => part.stability === 'volatile')
  for (const part of firstVolatile === -1 ? [] : parts.slice(firstVolatile).filter(({ cacheBreakpoint }) => cacheBreakpoint)) {
    const { name, layer } = parts[firstVolatile]!
    add('breakpoint-after-volatile', part, undefined, () => breakpointAfterVolatileMessage(part.name, part.layer, name, layer))
  }

  if (changedBefore !== undefined && changedBefore.size > 0 && changed.size > 0) {
    const lastStable = parts.findLastIndex(({ name }) => !changed.has(name) && !changedBefore.has(name))
    for (const part of parts.filter(({ name }, i) => i < lastStable && changed.has(name) && changedBefore.has(name))) {
      const message = () => `${entryLabel('prompt section', part.name, part.layer)} changed in two consecutive steps while later sections stayed the same; a per-step value this early in the prompt invalidates the cache of everything after it — move it into a runtime context or give the section a later order`
      add('unstable-section', part, undefined, message)
    }
  }
  for (const part of parts.filter(({ restored }) => restored)) {
    const label = () => (part.layer === 'global' ? `prompt section "${part.name}" in the global layer` : entryLabel('prompt section', part.name, part.layer))
    const message = () => `required ${label()} was restored after the "system-prompt/assemble" waterfall: a listener dropped, edited or reordered it, and required sections keep their registered text and place; leave it in the listener's result, or register it without required: true if listeners may change it`
    add('required-restored', part, undefined, message)
  }
  return out
}
