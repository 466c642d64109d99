// Anthropic's minimum cacheable prompt length per model: a prefix through a
// cache_control block shorter than this is processed without caching (no
// error, nothing written, nothing read).
//
// Source: "Prompt caching" → "Cache limitations",
// https://platform.claude.com/docs/en/build-with-claude/prompt-caching
// The list has changed between revisions of that page (Claude Sonnet 4.6 was
// listed at 2048 tokens in one revision and at 1024 before and after it); this
// table follows the latest revision, and the three retired models it no longer
// lists (Claude Sonnet 3.7, Claude Haiku 3, Claude Sonnet 3.5) keep the value the
// earlier revisions gave them. An unknown model gets the most conservative
// minimum in the table.

/** Model ids (without a snapshot date) → minimum cacheable tokens. */
export const ANTHROPIC_MINIMUM_TOKENS: Readonly<Record<string, number>> = Object.freeze({
  'claude-opus-5': 512,
  'claude-fable-5': 512,
  'claude-mythos-5': 512,
  'claude-mythos-preview': 2048,
  'claude-opus-4-7': 2048,
  'claude-opus-4-6': 4096,
  'claude-opus-4-5': 4096,
  'claude-opus-4-8': 1024,
  'claude-sonnet-5': 1024,
  'claude-sonnet-4-6': 1024,
  'claude-sonnet-4-5': 1024,
  'claude-opus-4-1': 1024,
  'claude-opus-4': 1024,
  'claude-sonnet-4': 1024,
  'claude-haiku-4-5': 4096,
  'claude-3-5-haiku': 2048,
  'claude-3-haiku': 2048,
  'claude-3-7-sonnet': 1024,
  'claude-3-5-sonnet': 1024,
})

/** The most conservative (largest) minimum in the table: what an unknown model gets. */
export const ANTHROPIC_UNKNOWN_MODEL_MINIMUM = Math.max(...Object.values(ANTHROPIC_MINIMUM_TOKENS))

/**
 * The minimum for `model`: the entry for the id itself or for the id without its snapshot suffix
 * (`claude-sonnet-4-5-20250929` and `claude-3-5-haiku-latest` use `claude-sonnet-4-5` and
 * `claude-3-5-haiku`), else the unknown-model minimum; a newer minor version (`claude-opus-5-5`) is an
 * unknown model. `overrides` (same keys) take precedence over the table.
 */
export function anthropicMinimumTokens(model: string, overrides: Readonly<Record<string, number>> = {}): number {
  const id = model.replace(/-(\d{8}|latest)$/, '')
  if (Object.hasOwn(overrides, id)) return overrides[id]!
  return Object.hasOwn(ANTHROPIC_MINIMUM_TOKENS, id) ? ANTHROPIC_MINIMUM_TOKENS[id]! : ANTHROPIC_UNKNOWN_MODEL_MINIMUM
}
