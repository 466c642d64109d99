/** `toAISDK` (SPEC §4.2, §4.3): `system` and `messages` for a Vercel AI SDK call, with Anthropic's cache markers. */

import { callerTtl, ephemeral, placeOwnMarkers, resolveMarkedRequest, walkMarkers, type CacheTtlOption, type CallerMarker } from './cache-markers.js'
import type { AnthropicCacheControl } from './anthropic.js'
import type { OpenAIChatSnapshotMessage } from './openai-chat.js'
import { recordHistory } from './request-history.js'
import type { RequestOptions } from './request-input.js'

/** The Anthropic provider option that marks a cache breakpoint (no `ttl`: 5 minutes). */
export type AISDKCacheControlOptions = {
  anthropic: {
    cacheControl: AnthropicCacheControl
  }
}

/** A system model message (the AI SDK's `SystemModelMessage` shape). */
export type AISDKSystemMessage = {
  role: 'system'
  content: string
  providerOptions?: AISDKCacheControlOptions
}

/** The snapshot message promptloom adds. */
export type AISDKSnapshotMessage = OpenAIChatSnapshotMessage

/** Any model message of the caller's history (the AI SDK's `ModelMessage` fits); its cache markers count at any depth. */
export type AISDKMessageLike = {
  readonly role: 'system' | 'user' | 'assistant' | 'tool'
  readonly providerOptions?: unknown
  readonly content?: string | unknown[]
}

/** Options of `toAISDK`. */
export interface AISDKRequestOptions<M extends AISDKMessageLike> extends RequestOptions {
  /** The conversation so far as AI SDK model messages. Never mutated. */
  readonly messages: readonly M[]
  /** Mark the last history message before the snapshot, so the conversation is cached too. Default `true`; none when it is marked already. */
  readonly historyBreakpoint?: boolean
  /** The TTL of promptloom's markers; default none, Anthropic's 5 minutes. */
  readonly ttl?: CacheTtlOption
}

/** The call fields `toAISDK` returns, ready to spread into `generateText` or return from `prepareStep`. */
export interface AISDKRequest<M extends AISDKMessageLike> {
  system: AISDKSystemMessage[]
  /** The history with the snapshot message and the history breakpoint added: a new array, the caller's messages untouched. */
  messages: (M | AISDKSnapshotMessage)[]
}

function markerIn(providerOptions: unknown): unknown {
  if (typeof providerOptions !== 'object' || providerOptions === null) return undefined
  const anthropic = (providerOptions as { anthropic?: { cacheControl?: unknown; cache_control?: unknown } | null }).anthropic
  if (typeof anthropic !== 'object' || anthropic === null) return undefined
  return anthropic.cacheControl ?? anthropic.cache_control ?? undefined
}

/** A tool call's `input` and a JSON tool output's `value` are data; `providerOptions` is the marker. */
function skipped(node: object, key: string): boolean {
  if (key === 'input' || key === 'providerOptions') return true
  const type = (node as { type?: unknown }).type
  return key === 'value' && (type === 'json' || type === 'error-json')
}

/** The caller's markers in prefix order: each part's (at any depth) before its message's own. */
function callerMarkersOf(history: readonly AISDKMessageLike[]): CallerMarker[] {
  const markers: CallerMarker[] = []
  history.forEach((message, index) => {
    if (Array.isArray(message.content)) {
      ;(message.content as readonly unknown[]).forEach((part, partIndex) => {
        walkMarkers(part, (node) => markerIn((node as { providerOptions?: unknown }).providerOptions), skipped, (marker) =>
          markers.push({ message: index, block: partIndex, ttl: callerTtl(marker) }),
        )
      })
    }
    const own = markerIn(message.providerOptions)
    if (own != null) markers.push({ message: index, block: Infinity, ttl: callerTtl(own) })
  })
  return markers
}

function hasContent({ content }: AISDKMessageLike): boolean {
  return typeof content === 'string' ? content !== '' : Array.isArray(content) && content.length > 0
}

function objectOr(value: unknown): Record<string, unknown> {
  return (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
}

/**
 * Builds the AI SDK call fields for one step: a system message per `PromptBlock`, markers as `toAnthropic` places them
 * (markers on the tools you pass are not seen: leave room with `historyBreakpoint: false`), the snapshot as a user message
 * before trailing system messages. Throws a `TypeError` naming the bad option, tool or history index.
 *
 * @example
 * ```ts
 * import { anthropic } from '@ai-sdk/anthropic'
 * import { generateText } from 'ai'
 * import { toAISDK, usageFromAISDK } from 'promptloom'
 *
 * const result = surface.step({ assembly })
 * const request = toAISDK({ assembly, rendered: result.rendered, messages: [{ role: 'user', content: 'Which test fails?' }] })
 * const reply = await generateText({ model: anthropic('claude-sonnet-4-6'), ...request })
 * surface.observeUsage(usageFromAISDK(reply.usage))
 * ```
 */
export function toAISDK<const M extends AISDKMessageLike>(options: AISDKRequestOptions<M>): AISDKRequest<M> {
  const { rendered, snapshot, history, historyBreakpoint, ttl, callers, split } = resolveMarkedRequest('toAISDK', options, callerMarkersOf)
  const target = historyBreakpoint ? history.slice(0, split).findLastIndex(hasContent) : -1
  // A message already marked (itself, or its last part, where its own marker would land) needs no second marker.
  const content = history[target]?.content
  const lastPart = Array.isArray(content) ? (content.at(-1) as { providerOptions?: unknown } | null) : undefined
  const targetMarked = target !== -1 && (markerIn(history[target]!.providerOptions) != null || markerIn(lastPart?.providerOptions) != null)
  const { blocks } = rendered
  const own = placeOwnMarkers({ blocks, tools: false, history: target !== -1 && !targetMarked, callers, beforeHistory: (marker) => marker.message <= target, ttl })

  const system = blocks.map((block, index): AISDKSystemMessage =>
    own.has(index)
      ? { role: 'system', content: block.text, providerOptions: { anthropic: { cacheControl: ephemeral(own.get(index)) } } }
      : { role: 'system', content: block.text },
  )
  const kept: (M | AISDKSnapshotMessage)[] = history.slice()
  if (snapshot !== '') kept.splice(split, 0, { role: 'user', content: snapshot })
  const messages = kept.slice()
  if (own.has('history')) {
    const message = history[target]!
    const providerOptions = objectOr(message.providerOptions)
    const anthropic = { ...objectOr(providerOptions.anthropic), cacheControl: ephemeral(own.get('history')) }
    messages[target] = { ...message, providerOptions: { ...providerOptions, anthropic } }
  }
  const request: AISDKRequest<M> = { system, messages }
  recordHistory(request, kept, history.slice())
  return request
}
