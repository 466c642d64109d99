/**
 * The cache-stability lint of the step surface. A value that changes every
 * step belongs in a runtime context: inside the system prompt it invalidates
 * the KV cache from its section on. It reads the `RenderedPrompt` only: the
 * parts' layers and the referenced variables' stability come with it.
 */

import { breakpointAfterVolatileMessage } from '../assembly/diagnostics.js'
import { labelInLayer, type LayerRef } from '../assembly/entries.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'

/** A cache-stability lint finding. */
export interface StabilityWarning {
  /**
   * `'volatile-variable'`: a section references a variable registered with
   * `stability: 'volatile'`. `'unstable-section'`: a section's output changed
   * in two consecutive steps while a later non-empty section stayed the same.
   * `'required-restored'`: a listener dropped, edited or reordered a
   * `required` section and the assembly restored it (see `restored-lint.ts`).
   * `'breakpoint-after-volatile'`: a `cacheBreakpoint` section at or after the
   * first volatile one, where no cache marker is placed (SPEC §4.1).
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

/**
 * (a) every section not itself declared volatile that references a
 * `volatile` variable; (b) every section that changed in this step and the
 * previous one while some section after it stayed the same in both; (c)
 * every `cacheBreakpoint` section at or after the first volatile one. Findings
 * already reported are left out.
 */
export function lintStability(
  rendered: RenderedPrompt,
  changed: ReadonlySet<string>,
  changedBefore: ReadonlySet<string> | undefined,
  reported: ReportedWarnings,
): PendingWarning[] {
  const { parts } = rendered
  const out: PendingWarning[] = []
  const add = (
    kind: StabilityWarning['kind'],
    section: string,
    layer: LayerRef | undefined,
    variable: string | undefined,
    message: string,
  ) => {
    const key = `${kind}\0${section}\0${variable ?? ''}`
    if (reported.has(layer, key) || out.some((p) => p.key === key && p.layer === layer)) return
    const warning: StabilityWarning = {
      kind,
      section,
      ...(layer === undefined ? {} : { layer }),
      ...(variable === undefined ? {} : { variable }),
      message,
    }
    out.push({ key, layer, warning })
  }

  const volatile = rendered.variables.filter((variable) => variable.stability === 'volatile')
  if (volatile.length > 0) {
    for (const part of parts) {
      if (part.stability === 'volatile') continue
      for (const variable of volatile) {
        if (!part.variables.includes(variable.name)) continue
        add(
          'volatile-variable',
          part.name,
          part.layer,
          variable.name,
          `${labelInLayer('prompt section', part.name, part.layer)} references volatile ${labelInLayer('prompt variable', variable.name, variable.layer)}; a value that changes every step invalidates the cached prompt from this section on — move it into a runtime context`,
        )
      }
    }
  }

  const firstVolatile = parts.findIndex((part) => part.stability === 'volatile')
  if (firstVolatile !== -1) {
    const volatile = parts[firstVolatile]!
    for (let i = firstVolatile; i < parts.length; i++) {
      const part = parts[i]!
      if (!part.cacheBreakpoint) continue
      add('breakpoint-after-volatile', part.name, part.layer, undefined, breakpointAfterVolatileMessage(part.name, part.layer, volatile.name, volatile.layer))
    }
  }

  if (changedBefore !== undefined && changedBefore.size > 0 && changed.size > 0) {
    const flagged: (typeof parts)[number][] = []
    let stableAfter = false
    for (let j = parts.length - 1; j >= 0; j--) {
      const part = parts[j]!
      if (changed.has(part.name) && changedBefore.has(part.name)) {
        if (stableAfter) flagged.push(part)
      } else if (!changed.has(part.name) && !changedBefore.has(part.name)) {
        stableAfter = true
      }
    }
    for (const part of flagged.reverse()) {
      add(
        'unstable-section',
        part.name,
        part.layer,
        undefined,
        `${labelInLayer('prompt section', part.name, part.layer)} changed in two consecutive steps while later sections stayed the same; a per-step value this early in the prompt invalidates the cache of everything after it — move it into a runtime context or give the section a later order`,
      )
    }
  }
  return out
}
