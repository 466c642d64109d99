/**
 * The providers' documented prompt-cache rules (SPEC §4.3), by which the step surface expects cache reuse:
 *
 *   provider    minimumTokens          granularity   breakpoints
 *   anthropic   per model (table)      1             true
 *   openai      1024                   128           false
 *   deepseek    64                     64            false
 */

import { describeValue, optionError } from '../assembly/errors.js'

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
 * Anthropic's minimum cacheable length per model id (no date suffix), from "Prompt caching — Cache limitations":
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations (Bedrock documents its own).
 */
const ANTHROPIC_MINIMUMS: readonly (readonly [minimumTokens: number, models: readonly string[]])[] = [
  [512, ['claude-fable-5-1', 'claude-mythos-5-1', 'claude-opus-5-5', 'claude-opus-5', 'claude-fable-5', 'claude-mythos-5']],
  [1024, ['claude-opus-4-8', 'claude-sonnet-5', 'claude-sonnet-4-6', 'claude-sonnet-4-5', 'claude-opus-4-1', 'claude-opus-4', 'claude-sonnet-4']],
  [2048, ['claude-mythos-preview', 'claude-opus-4-7', 'claude-3-5-haiku']],
  [4096, ['claude-opus-4-6', 'claude-opus-4-5', 'claude-haiku-4-5']],
]

/**
 * The minimum of the table key `model` names, else the largest. A provider prefix (`anthropic.`,
 * `us.anthropic.`, `anthropic/`) is dropped and `4.5` reads as `4-5`; after the key may only come
 * a date, `-latest`, or a platform suffix (`@…`, `-v1:0`, `:…`), so `claude-opus-4-1` never reads as `claude-opus-4`.
 */
function anthropicMinimumOf(model: string): number {
  const id = model
    .toLowerCase()
    .replace(/^(?:[a-z]{2,6}\.)?anthropic[./]/, '')
    .replace(/(\d)\.(\d)/g, '$1-$2')
  const matches = (key: string): boolean => id.startsWith(key) && /^(?:$|-\d{8}|-latest|@|-v\d|:)/.test(id.slice(key.length))
  return ANTHROPIC_MINIMUMS.find(([, keys]) => keys.some(matches))?.[0] ?? Math.max(...ANTHROPIC_MINIMUMS.map(([m]) => m))
}

function minimumOption(fn: string, value: unknown): number | undefined {
  if (value === undefined || (Number.isInteger(value) && (value as number) >= 0)) return value as number | undefined
  throw optionError(fn, 'minimumTokens', 'a non-negative integer', value)
}

function optionsObject(fn: string, options: unknown): Record<string, unknown> {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`${fn} expects an options object (got ${describeValue(options)})`)
  return options as Record<string, unknown>
}

/** The rules `createStepSurface({ countTokens, cacheRules })` predicts with; each factory's `minimumTokens` overrides the minimum. */
export const cacheRules = Object.freeze({
  /**
   * Anthropic's rules for a Claude `model`: its documented minimum (an unknown model gets the largest),
   * granularity 1, breakpoints. Throws a `TypeError` for a missing model or a bad `minimumTokens`.
   */
  anthropic(options: { readonly model: string; readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.anthropic'
    const { model, minimumTokens } = optionsObject(fn, options)
    if (typeof model !== 'string' || model === '') {
      throw optionError(fn, 'model', "the Claude model id the requests use, e.g. 'claude-sonnet-4-6'", model)
    }
    const minimum = minimumOption(fn, minimumTokens) ?? anthropicMinimumOf(model)
    return Object.freeze({ provider: 'anthropic', minimumTokens: minimum, granularity: 1, breakpoints: true })
  },
  /** OpenAI's rules (prompt caching guide): from 1024 tokens in 128-token steps, no markers; `model` is for symmetry. */
  openai(options?: { readonly model?: string; readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.openai'
    const { model, minimumTokens } = optionsObject(fn, options)
    if (model !== undefined && typeof model !== 'string') throw optionError(fn, 'model', 'a string', model)
    return Object.freeze({ provider: 'openai', minimumTokens: minimumOption(fn, minimumTokens) ?? 1024, granularity: 128, breakpoints: false })
  },
  /** DeepSeek's rules (context caching guide): 64-token units from 64 tokens, no markers. */
  deepseek(options?: { readonly minimumTokens?: number }): CacheRules {
    const fn = 'cacheRules.deepseek'
    const { minimumTokens } = optionsObject(fn, options)
    return Object.freeze({ provider: 'deepseek', minimumTokens: minimumOption(fn, minimumTokens) ?? 64, granularity: 64, breakpoints: false })
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
  const bad = (field: string, rule: string, got: unknown): never => {
    throw new TypeError(`${label} field "${field}" must be ${rule} (got ${describeValue(got)})`)
  }
  if (!Number.isInteger(minimumTokens) || minimumTokens! < 0) bad('minimumTokens', 'a non-negative integer', minimumTokens)
  if (!Number.isInteger(granularity) || granularity! < 1) bad('granularity', 'a positive integer', granularity)
  if (typeof breakpoints !== 'boolean') bad('breakpoints', 'a boolean', breakpoints)
  return rules as CacheRules
}

/** Why a reusable prefix is not expected to be served from the provider's cache. */
export type CacheNote = 'below-minimum' | 'no-breakpoint'
