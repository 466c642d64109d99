/**
 * The diagnostics that depend on where a section sits in prompt order: a
 * `cacheBreakpoint` that can get no marker, and a scoped section that splits
 * the prefix an agent shares with its siblings (see diagnostics.ts).
 */

import { labelInLayer, layerOf, SourceKind, type LayerRef, type SectionEntry } from './entries.js'
import type { PromptDiagnostic } from './diagnostics.js'

/**
 * Why a `cacheBreakpoint` section at or after the first volatile one gets no
 * cache marker (SPEC §4.1): shared by `diagnostics()` and the step surface.
 */
export function breakpointAfterVolatileMessage(section: string, layer: LayerRef | undefined, volatile: string, volatileLayer: LayerRef | undefined): string {
  const marked = labelInLayer('prompt section', section, layer)
  const at = section === volatile ? 'is itself volatile' : `is ordered after volatile ${labelInLayer('prompt section', volatile, volatileLayer)}`
  return `${marked} has cacheBreakpoint: true but ${at}; no cache marker is placed at or after volatile text (that prefix changes every step, so a marker could only pay for cache writes) — order it before the volatile section, or move the per-step text into a runtime context`
}

/** A `'breakpoint-after-volatile'` finding for every `cacheBreakpoint` entry at or after the first volatile one (entries in prompt order). */
export function breakpointFindings(entries: readonly SectionEntry[], out: PromptDiagnostic[]): void {
  const first = entries.findIndex((entry) => entry.stability === 'volatile')
  if (first === -1) return
  const volatile = entries[first]!
  for (let i = first; i < entries.length; i++) {
    const entry = entries[i]!
    if (!entry.cacheBreakpoint) continue
    const layer = layerOf(entry.scope)
    const message = breakpointAfterVolatileMessage(entry.name, layer, volatile.name, layerOf(volatile.scope))
    out.push(Object.freeze({ kind: 'breakpoint-after-volatile', entry: entry.name, entryKind: 'section', layer, message }))
  }
}

/** Whether a section's text is known to be the empty string (a function text never is; a signal is read, and one that throws is not). */
function emptyText(entry: SectionEntry): boolean {
  if (entry.kind === SourceKind.Static) return entry.value === ''
  if (entry.kind === SourceKind.Provider) return false
  try {
    return entry.signal!.value === ''
  } catch {
    return false
  }
}

/**
 * A `'shared-prefix-split'` finding for every section supplied by a scope
 * layer that is ordered before a global section whose text is not empty
 * (entries in prompt order), naming the first such global section.
 */
export function sharedPrefixFindings(entries: readonly SectionEntry[], out: PromptDiagnostic[]): void {
  let before: SectionEntry | undefined
  const found: PromptDiagnostic[] = []
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!
    if (entry.scope === undefined) {
      if (!emptyText(entry)) before = entry
      continue
    }
    if (before === undefined) continue
    const layer = layerOf(entry.scope)
    const message =
      `${labelInLayer('prompt section', entry.name, layer)} is ordered before global prompt section "${before.name}", so every global section from there on ` +
      `is no longer part of a prefix this agent shares with its siblings (their cached prefix ends where this section starts) — ` +
      `order it after the global sections (e.g. at SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX or later), or register it globally`
    found.push(Object.freeze({ kind: 'shared-prefix-split', entry: entry.name, entryKind: 'section', layer, before: before.name, message }))
  }
  for (let i = found.length - 1; i >= 0; i--) out.push(found[i]!)
}
