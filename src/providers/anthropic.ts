/** `toAnthropic` (SPEC §4.2, §4.3): the Messages API fields promptloom owns, with `cache_control` breakpoints. */

import { blocksOf, lastMarkable, resolveMarkedRequest } from './cache-markers.js'
import type { CacheTtl, CacheTtlOption, MarkerFormat, OwnMarker } from './cache-markers.js'
import { recorded, type RequestOptions } from './request.js'

/** Caches the request prefix through the block that carries it; no `ttl`: Anthropic's 5 minutes. */
export type AnthropicCacheControl = {
  type: 'ephemeral'
  ttl?: CacheTtl
}

/** A text content block (system blocks and the snapshot). */
export type AnthropicTextBlock = {
  type: 'text'
  text: string
  cache_control?: AnthropicCacheControl
}

/** A tool declaration of the Messages API. */
export type AnthropicTool = {
  name: string
  description: string
  input_schema: {
    type: 'object'
    [key: string]: unknown
  }
  cache_control?: AnthropicCacheControl
}

/** Any content block of the caller's history (the SDK's `ContentBlockParam` fits). */
export type AnthropicContentBlockLike = {
  readonly type: string
  /** Counts against `ANTHROPIC_MAX_CACHE_MARKERS`, as do markers nested inside the block. */
  readonly cache_control?: unknown
}

/** Any message of the caller's history (the SDK's `MessageParam` fits). */
export type AnthropicMessageLike = {
  readonly role: 'user' | 'assistant' | 'system'
  readonly content: string | readonly AnthropicContentBlockLike[]
}

/** The user message promptloom adds when the history does not end with a user turn. */
export type AnthropicSnapshotMessage = {
  role: 'user'
  content: AnthropicTextBlock[]
}

/** Options of `toAnthropic`. */
export interface AnthropicRequestOptions<M extends AnthropicMessageLike> extends RequestOptions {
  /** The conversation so far, in the Messages API's format. Never mutated. */
  readonly messages: readonly M[]
  /** Mark the last content block before the snapshot, so the conversation is cached too. Default `true`; none when it is marked already. */
  readonly historyBreakpoint?: boolean
  /** The TTL of promptloom's markers; default none, Anthropic's 5 minutes. */
  readonly ttl?: CacheTtlOption
}

/** The request fields `toAnthropic` returns, ready to spread into `client.messages.create`. */
export interface AnthropicRequest<M extends AnthropicMessageLike> {
  system: AnthropicTextBlock[]
  tools: AnthropicTool[]
  /** A copy of the history with the snapshot and the history breakpoint added (the caller's array and messages are untouched). */
  messages: (M | AnthropicSnapshotMessage)[]
}

/** A marker at any depth of a message's content; a tool's `input` is data, never a marker. */
const MARKERS: MarkerFormat<AnthropicMessageLike> = {
  markerOf: (node) => (node as { cache_control?: unknown }).cache_control,
  skip: (_node, key) => key === 'input' || key === 'cache_control',
  onMessage: false,
  marksTools: true,
  historyTarget: (history, end) => {
    const at = lastMarkable(history, end, ['thinking', 'redacted_thinking'])
    return at && (at.blocks[at.block] as AnthropicContentBlockLike).cache_control == null ? at : undefined
  },
}

/**
 * Builds the Messages API request fields for one step: a system text block per `PromptBlock`, the tools, and the history
 * with the snapshot in the last user turn (else a new user message) before trailing system messages. The caller's markers
 * stay; promptloom's take what is left of `ANTHROPIC_MAX_CACHE_MARKERS`. Throws a `TypeError` naming the bad option, tool,
 * history index, or caller markers whose TTLs are out of order.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk'
 * import { historyOf, toAnthropic, usageFromAnthropic } from 'promptloom'
 *
 * let history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Which test fails?' }]
 * const request = toAnthropic({ assembly, rendered: surface.step({ assembly }).rendered, messages: history })
 * const reply = await new Anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, ...request })
 * history = [...historyOf(request), { role: 'assistant', content: reply.content }] // as sent, without the cache markers
 * surface.observeUsage(usageFromAnthropic(reply.usage))
 * ```
 */
export function toAnthropic<M extends AnthropicMessageLike>(options: AnthropicRequestOptions<M>): AnthropicRequest<M> {
  const { blocks, tools, snapshot, history, split, own, target } = resolveMarkedRequest('toAnthropic', options, MARKERS)
  const marking = (place: OwnMarker) => (own.has(place) ? { cache_control: own.get(place)! } : {})
  // The history with `marker` on the target and the snapshot at `split`: into the user turn before it, else a new user message.
  const placed = (marker: AnthropicCacheControl | undefined): (M | AnthropicSnapshotMessage)[] => {
    const messages: (M | AnthropicSnapshotMessage)[] = history.slice()
    if (target !== undefined) {
      const message = history[target.message]!
      const blocks = blocksOf(message.content)
      if (marker !== undefined) blocks[target.block] = { ...(blocks[target.block] as object), cache_control: marker }
      messages[target.message] = { ...message, content: blocks } as M
    }
    if (snapshot === '') return messages
    const block: AnthropicTextBlock = { type: 'text', text: snapshot }
    const last = messages[split - 1]
    if (last?.role === 'user') messages[split - 1] = { ...last, content: [...blocksOf(last.content), block] } as M
    else messages.splice(split, 0, { role: 'user', content: [block] })
    return messages
  }

  const system = blocks.map(({ text }, index): AnthropicTextBlock => ({ type: 'text', text, ...marking(index) }))
  // The Messages API requires `type: 'object'`: it is added when missing (resolveRequest rejects another type).
  const out = tools.map(({ name, description, parameters }, index): AnthropicTool => {
    const input_schema = (parameters.type === 'object' ? parameters : { ...parameters, type: 'object' }) as AnthropicTool['input_schema']
    return { name, description, input_schema, ...(index === tools.length - 1 ? marking('tools') : {}) }
  })
  // Recorded as sent, without the marker: a marked string content stays one text block.
  return recorded({ system, tools: out, messages: placed(own.get('history')) }, placed(undefined), history)
}

