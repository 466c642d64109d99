import type { LayerRef } from '../assembly/entries.js'

/** What broke the reusable prefix first, in prefix order (tools → config → system prompt). */
export type CacheBreakCause = 'tools' | 'config' | 'withheld' | 'restored' | 'section' | 'removed' | 'added'

/**
 * Why a step lost reuse (SPEC §3 "Why the cache broke"): the first cause in
 * prefix order. `section`/`layer` name the part at the first difference (for
 * `'withheld'`/`'restored'`, the section the budget moved); `variable` is set
 * when that part's template is unchanged and a referenced variable's value
 * changed; `tools` lists the tool names when the tools changed.
 */
export interface CacheBreak {
  readonly cause: CacheBreakCause
  readonly section?: string
  readonly layer?: LayerRef
  readonly variable?: string
  readonly tools?: {
    readonly added: readonly string[]
    readonly removed: readonly string[]
    readonly changed: readonly string[]
  }
}
