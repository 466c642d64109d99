/**
 * The attributes a traced step and its usage record carry. Names follow the
 * OpenTelemetry GenAI semantic conventions (semantic-conventions v1.41.0) where they define one
 * (`gen_ai.system_instructions`, `gen_ai.usage.*`); what they do not cover —
 * prefixes, expected reuse, why the cache broke — is `promptloom.*`. Pure:
 * plain values in, a fresh attribute record out.
 */

import type { Attributes } from '@opentelemetry/api'
import { layerLabel } from '../surface/session-log.js'
import type { StepResult } from '../surface/step-result.js'
import type { UsageRecord } from '../surface/usage-record.js'

/**
 * The attributes of one step: who and which step, the prefix figures the
 * step result has, the cache break when it lost reuse, the budget's withheld
 * sections, and `instructions` as `gen_ai.system_instructions`. A figure the
 * result does not have (no `countTokens`, no `cacheRules`, no budget) is left
 * out, never written as 0.
 */
export function stepAttributes(result: StepResult, agent: string | undefined, instructions: string): Attributes {
  const attributes: Attributes = {}
  if (agent !== undefined) attributes['promptloom.agent'] = agent
  attributes['promptloom.step'] = result.step
  if (result.stablePrefixTokens !== undefined) attributes['promptloom.stable_prefix_tokens'] = result.stablePrefixTokens
  if (result.reusablePrefixTokens !== undefined) attributes['promptloom.reusable_prefix_tokens'] = result.reusablePrefixTokens
  if (result.promptTokens !== undefined) attributes['promptloom.prompt_tokens'] = result.promptTokens
  if (result.expectedCachedTokens !== undefined) attributes['promptloom.expected_cached_tokens'] = result.expectedCachedTokens
  if (result.cacheNote !== undefined) attributes['promptloom.cache_note'] = result.cacheNote
  const broke = result.cacheBreak
  if (broke !== undefined) {
    attributes['promptloom.cache_break.cause'] = broke.cause
    if (broke.section !== undefined) attributes['promptloom.cache_break.section'] = broke.section
    if (broke.layer !== undefined) attributes['promptloom.cache_break.layer'] = layerLabel(broke.layer)
    if (broke.variable !== undefined) attributes['promptloom.cache_break.variable'] = broke.variable
    if (broke.tools !== undefined) {
      attributes['promptloom.cache_break.tools.added'] = [...broke.tools.added]
      attributes['promptloom.cache_break.tools.removed'] = [...broke.tools.removed]
      attributes['promptloom.cache_break.tools.changed'] = [...broke.tools.changed]
    }
  }
  if (result.withheld !== undefined) attributes['promptloom.withheld'] = [...result.withheld]
  attributes['promptloom.tools_changed'] = result.toolsChanged
  attributes['gen_ai.system_instructions'] = instructions
  return attributes
}

/**
 * What the provider reported, in the conventions' names: `input_tokens` counts
 * every prompt token, cached ones included (as `ObservedUsage.inputTokens`
 * does), and the cache reads and writes are parts of it. The write figure is
 * left out when the provider reports none.
 */
export function usageAttributes(record: UsageRecord): Attributes {
  const attributes: Attributes = {
    'gen_ai.usage.input_tokens': record.inputTokens,
    'gen_ai.usage.cache_read.input_tokens': record.cachedInputTokens,
  }
  if (record.cacheWriteTokens !== undefined) attributes['gen_ai.usage.cache_creation.input_tokens'] = record.cacheWriteTokens
  return attributes
}
