/**
 * The providers' documented prompt-cache rules (SPEC §4.3), as data the step
 * surface predicts with: the shortest prefix a provider caches, the step a
 * cached prefix grows in, and whether only prefixes that end at a marked
 * block are cached.
 *
 *   provider    minimumTokens          granularity   breakpoints
 *   anthropic   per model (table)      1             true
 *   openai      1024                   128           false
 *   deepseek    64                     64            false
 */

import { describeValue } from '../assembly/errors.js'

/** What a provider caches, by its documentation. */
export interface CacheRules {
  readonly provider: 'anthropic' | 'openai' | 'deepseek'
  /** The shortest prefix the provider caches, in tokens. */
  readonly minimumTokens: number
  /** A cached prefix is a multiple of this many tokens. */
  readonly granularity: number
  /** Only prefixes that end at a marked block are cached (Anthropic's `cache_control`). */
  readonly breakpoints: boolean
}

/**
 * Anthropic's minimum cacheable prompt length per model, from "Prompt
 * caching — Cache limitations" in Anthropic's documentation:
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations
 * Keys are model ids without a date or version suffix; the Claude API, Claude
 * Platform on AWS, Google Cloud and Microsoft Foundry share these (Amazon
 * Bedrock documents its own).
 */
const ANTHROPIC_MINIMUMS: readonly (readonly [model: string, minimumTokens: number])[] = [
  ['claude-fable-5-1', 512],
  ['claude-mythos-5-1', 512],
  ['claude-opus-5-5', 512],
  ['claude-opus-5', 512],
  ['claude-fable-5', 512],
  ['claude-mythos-5', 512],
  ['claude-opus-4-8', 1024],
  ['claude-sonnet-5', 1024],
  ['claude-sonnet-4-6', 1024],
  ['claude-sonnet-4-5', 1024],
  ['claude-opus-4-1', 1024],
  ['claude-opus-4', 1024],
  ['claude-sonnet-4', 1024],
  ['claude-mythos-preview', 2048],
  ['claude-opus-4-7', 2048],
  ['claude-opus-4-6', 4096],
  ['claude-opus-4-5', 4096],
  ['claude-haiku-4-5', 4096],
  ['claude-3-5-haiku', 2048],
]

/** The most conservative (largest) minimum of the table: what an unknown model gets. */
export const ANTHROPIC_UNKNOWN_MODEL_MINIMUM = Math.max(...ANTHROPIC_MINIMUMS.map(([, minimum]) => minimum))

/** OpenAI caches prompts from 1024 tokens, in steps of 128 (OpenAI's prompt caching guide). */
const OPENAI_MINIMUM = 1024
const OPENAI_GRANULARITY = 128
/** DeepSeek's context cache works in 64-token units (DeepSeek's context caching guide). */
const DEEPSEEK_UNIT = 64

/**
 * The minimum of the table key `model` names, or `undefined`. A provider
 * prefix (`anthropic.`, `us.anthropic.`, `anthropic/`) is dropped; what follows the
 * key may only be a date (`-20250929`), `-latest`, or a platform suffix
 * (`@…`, `-v1:0`, `:…`), so `claude-opus-4-1` never reads as `claude-opus-4`.
 */
function anthropicMinimumOf(model: string): number | undefined {
  // `anthropic.` / `us.anthropic.` (Bedrock), `anthropic/` (gateways); dotted versions (`4.5`) read as `4-5`.
  const id = model
    .toLowerCase()
    .replace(/^(?:[a-z]{2,6}\.)?anthropic[./]/, '')
    .replace(/(\d)\.(\d)/g, '$1-$2')
  for (const [key, minimum] of ANTHROPIC_MINIMUMS) {
    if (!id.startsWith(key)) continue
    const rest = id.slice(key.length)
    if (rest === '' || /^(?:-\d{8}|-latest|@|-v\d|:)/.test(rest)) return minimum
  }
  return undefined
}

function minimumOption(fn: string, value: unknown): number | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value
  throw new TypeError(`${fn} option "minimumTokens" must be a non-negative integer (got ${describeValue(value)})`)
}

function optionsObject(fn: string, options: unknown): Record<string, unknown> {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`${fn} expects an options object (got ${describeValue(options)})`)
  return options as Record<string, unknown>
}

/** The rules `createStepSurface({ countTokens, cacheRules })` predicts with: one factory per provider. */
export const cacheRules = Object.freeze({
  /**
   * Anthropic's rules for `model` (a Claude model id): its documented minimum
   * cacheable length (an unknown model gets the table's largest),
   * granularity 1, breakpoints. `minimumTokens` overrides the minimum.
   * Throws a `TypeError` for a missing model or a bad minimum.
   */
  anthropic(options: { readonly model: string; readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.anthropic'
    const { model, minimumTokens } = optionsObject(fn, options)
    if (typeof model !== 'string' || model === '') {
      throw new TypeError(`${fn} option "model" must be the Claude model id the requests use, e.g. 'claude-sonnet-4-6' (got ${describeValue(model)})`)
    }
    const minimum = minimumOption(fn, minimumTokens) ?? anthropicMinimumOf(model) ?? ANTHROPIC_UNKNOWN_MODEL_MINIMUM
    return Object.freeze({ provider: 'anthropic', minimumTokens: minimum, granularity: 1, breakpoints: true })
  },
  /**
   * OpenAI's rules: caching from 1024 tokens in 128-token steps, no markers.
   * `model` is accepted for symmetry (every current model shares the rule);
   * `minimumTokens` overrides the minimum.
   */
  openai(options?: { readonly model?: string; readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.openai'
    const { model, minimumTokens } = optionsObject(fn, options)
    if (model !== undefined && typeof model !== 'string') throw new TypeError(`${fn} option "model" must be a string (got ${describeValue(model)})`)
    return Object.freeze({ provider: 'openai', minimumTokens: minimumOption(fn, minimumTokens) ?? OPENAI_MINIMUM, granularity: OPENAI_GRANULARITY, breakpoints: false })
  },
  /** DeepSeek's rules: 64-token units from 64 tokens, no markers; `minimumTokens` overrides the minimum. */
  deepseek(options?: { readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.deepseek'
    const { minimumTokens } = optionsObject(fn, options)
    return Object.freeze({ provider: 'deepseek', minimumTokens: minimumOption(fn, minimumTokens) ?? DEEPSEEK_UNIT, granularity: DEEPSEEK_UNIT, breakpoints: false })
  },
})

/** Validates a `cacheRules` option of `createStepSurface` (a `CacheRules`, e.g. from `cacheRules.anthropic`). */
export function checkCacheRules(value: unknown): CacheRules {
  const label = 'createStepSurface option "cacheRules"'
  const rules = value as Partial<CacheRules> | null
  if (typeof value !== 'object' || rules === null) {
    throw new TypeError(`${label} must be a CacheRules object from cacheRules.anthropic/openai/deepseek (got ${describeValue(value)})`)
  }
  const { minimumTokens, granularity, breakpoints } = rules
  if (typeof minimumTokens !== 'number' || !Number.isInteger(minimumTokens) || minimumTokens < 0) {
    throw new TypeError(`${label} field "minimumTokens" must be a non-negative integer (got ${describeValue(minimumTokens)})`)
  }
  if (typeof granularity !== 'number' || !Number.isInteger(granularity) || granularity < 1) {
    throw new TypeError(`${label} field "granularity" must be a positive integer (got ${describeValue(granularity)})`)
  }
  if (typeof breakpoints !== 'boolean') throw new TypeError(`${label} field "breakpoints" must be a boolean (got ${describeValue(breakpoints)})`)
  return rules as CacheRules
}
