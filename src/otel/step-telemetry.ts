/** A traced step's span names and attributes: the GenAI semantic conventions' (v1.41.0) `gen_ai.*` where defined, else `promptloom.*`. */

import type { Attributes } from '@opentelemetry/api'
import { fnv1a64 } from '../providers/openai.js'
import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import { layerLabel } from '../surface/session-log.js'
import type { StepResult } from '../surface/step-result.js'
import type { UsageRecord } from '../surface/usage-record.js'

/** The name of a step's span, and of the event that records a step on an active span. */
export const STEP_SPAN = 'promptloom.step'
/** The name of the event (or span) that carries usage reported after its step's span ended. */
export const USAGE_EVENT = 'promptloom.usage'

/**
 * Where a step is recorded while a span is active: `'child'`, a `promptloom.step` span of its own under it; `'events'`, a
 * `promptloom.step` event on it and its usage's attributes (while it records). With no active span, always a span of its own.
 */
export type ActiveSpanMode = 'child' | 'events'

/** The attributes of one step, with `instructions` as `gen_ai.system_instructions`; a figure the result lacks is left out, not 0. */
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

/** What the provider reported; `input_tokens` counts cached ones too, and the write figure is left out when not reported. */
export function usageAttributes(record: UsageRecord): Attributes {
  const attributes: Attributes = {
    'gen_ai.usage.input_tokens': record.inputTokens,
    'gen_ai.usage.cache_read.input_tokens': record.cachedInputTokens,
  }
  if (record.cacheWriteTokens !== undefined) attributes['gen_ai.usage.cache_creation.input_tokens'] = record.cacheWriteTokens
  return attributes
}

interface PartEntry {
  readonly item: string
  readonly hash: string
}

/**
 * The `gen_ai.system_instructions` of the prompts one traced surface records: one part per rendered section, as a JSON
 * string (the JavaScript API takes no structured attribute values). An unchanged section's part is the same frozen object
 * in the next prompt, so its item is kept beside it; a new part whose text equals the previous prompt's part of the same
 * name reuses its hash. A step thus hashes only changed texts.
 */
export class SystemInstructions {
  readonly #recordContent: boolean
  readonly #entries = new WeakMap<RenderedPart, PartEntry>()
  #prompt: RenderedPrompt | undefined
  #previous = new Map<string, RenderedPart>()
  #text = ''

  constructor(recordContent: boolean) {
    this.#recordContent = recordContent
  }

  /** The JSON list of `rendered`'s parts, in prompt order; part texts only with `recordContent`. */
  of(rendered: RenderedPrompt): string {
    if (rendered === this.#prompt) return this.#text
    const { parts } = rendered
    const named = new Map<string, RenderedPart>()
    let text = '['
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      let entry = this.#entries.get(part)
      if (entry === undefined) {
        const before = this.#previous.get(part.name)
        const hash = before !== undefined && before.text === part.text ? this.#entries.get(before)!.hash : fnv1a64(new TextEncoder().encode(part.text))
        entry = { item: itemOf(part, hash, this.#recordContent), hash }
        this.#entries.set(part, entry)
      }
      named.set(part.name, part)
      text += i === 0 ? entry.item : `,${entry.item}`
    }
    this.#prompt = rendered
    this.#previous = named
    this.#text = `${text}]`
    return this.#text
  }
}

/** A text part must carry its `content`, so a part recorded without its text is a generic part. */
function itemOf(part: RenderedPart, hash: string, recordContent: boolean): string {
  const about = {
    name: part.name,
    ...(part.layer === undefined ? {} : { layer: layerLabel(part.layer) }),
    stability: part.stability,
    content_hash: hash,
  }
  return JSON.stringify(recordContent ? { type: 'text', content: part.text, ...about } : { type: 'generic', generic_type: 'promptloom.section', ...about })
}
