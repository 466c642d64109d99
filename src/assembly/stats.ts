/** Cumulative counters that prove the memoization (see `SystemPrompt.stats()`), all zero when the service loads. */
export interface PromptStats {
  /** `assemble()` calls. */
  assemblies: number
  /** Merges of a scope's own entries of one kind into its parent's view; a scope without entries of a kind counts nothing. */
  structureRecomputes: number
  /** Calls of function providers (texts, variables, tools). */
  providerEvaluations: number
  /** Sections and contexts whose rendered text was computed (scanned or re-substituted). */
  sectionRenders: number
  /** Sections and contexts whose rendered text was reused unchanged. */
  renderCacheHits: number
  /** Detached copies made of tool schemas. */
  toolClones: number
  /** `system-prompt/change` events emitted. */
  changeEvents: number
}

/** A fresh all-zero counter set. */
export function createStats(): PromptStats {
  return { assemblies: 0, structureRecomputes: 0, providerEvaluations: 0, sectionRenders: 0, renderCacheHits: 0, toolClones: 0, changeEvents: 0 }
}
