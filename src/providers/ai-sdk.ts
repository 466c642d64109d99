/**
 * `toAISDK` (SPEC §4.2, §4.3): `system` and `messages` for a Vercel AI SDK
 * `generateText` / `streamText` call or a `prepareStep` result — one system
 * model message per `PromptBlock`, breakpoint blocks with Anthropic's
 * `cacheControl` provider option (other providers ignore it), and the
 * history breakpoint on the last history message. The marker budget and TTL
 * rule are `toAnthropic`'s (see cache-markers.ts).
 */

import { describeValue } from '../assembly/errors.js'
import { callerTtl, checkCallerOrder, placeOwnMarkers, ttlPlanOf, walkMarkers, type CacheTtl, type CacheTtlOption, type CallerMarker } from './cache-markers.js'
import { recordHistory } from './request-history.js'
import { checkHistory, resolveRequest, trailingInstructionsStart, type RequestOptions } from './request-input.js'

/** The Anthropic provider option that marks a cache breakpoint. */
export type AISDKCacheControlOptions = {
  anthropic: {
    /** Marks the message as a cache breakpoint. */
    cacheControl: {
      /** Always `'ephemeral'`, Anthropic's only cache type. */
      type: 'ephemeral'
      /** How long the cached prefix lives; absent: Anthropic's 5 minutes. */
      ttl?: '5m' | '1h'
    }
  }
}

/** A system model message (the AI SDK's `SystemModelMessage` shape). */
export type AISDKSystemMessage = {
  role: 'system'
  content: string
  /** Present on a kept breakpoint block: Anthropic's cache-control option. */
  providerOptions?: AISDKCacheControlOptions
}

/** The snapshot message promptloom adds. */
export type AISDKSnapshotMessage = {
  role: 'user'
  content: string
}

/** Any model message of the caller's history (the AI SDK's `ModelMessage` fits). */
export type AISDKMessageLike = {
  /** The message's role, one of the AI SDK's model message roles. */
  readonly role: 'system' | 'user' | 'assistant' | 'tool'
  /** The message's provider options; an Anthropic cache marker here counts against `ANTHROPIC_MAX_CACHE_MARKERS`. */
  readonly providerOptions?: unknown
  /** The message's content: a string or parts, whose `providerOptions` cache markers count too, at any depth. */
  readonly content?: string | unknown[]
}

/** Options of `toAISDK`. */
export interface AISDKRequestOptions<M extends AISDKMessageLike> extends RequestOptions {
  /** The conversation so far as AI SDK model messages. Never mutated. */
  readonly messages: readonly M[]
  /**
   * Mark the last history message before the snapshot with Anthropic's
   * `cacheControl` option, so the conversation is cached too. Default `true`;
   * none for an empty history, or when that message or its last part is
   * already marked.
   */
  readonly historyBreakpoint?: boolean
  /** The TTL of promptloom's markers (SPEC §4.3); default none, Anthropic's 5 minutes. */
  readonly ttl?: CacheTtlOption
}

/** The call fields `toAISDK` returns, ready to spread into `generateText` or return from `prepareStep`. */
export interface AISDKRequest<M extends AISDKMessageLike> {
  /** One system message per block. */
  system: AISDKSystemMessage[]
  /** The history with the snapshot message and the history breakpoint added: a new array, the caller's messages untouched. */
  messages: (M | AISDKSnapshotMessage)[]
}

const FN = 'toAISDK'

/** The Anthropic cache marker in a `providerOptions` value, if any. */
function markerIn(providerOptions: unknown): unknown {
  if (typeof providerOptions !== 'object' || providerOptions === null) return undefined
  const anthropic = (providerOptions as { anthropic?: { cacheControl?: unknown; cache_control?: unknown } | null }).anthropic
  if (typeof anthropic !== 'object' || anthropic === null) return undefined
  return anthropic.cacheControl ?? anthropic.cache_control ?? undefined
}

/** Keys that hold data or the marker itself: a tool call's `input`, a JSON tool output's `value`. */
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

/** Whether a message has content the provider can mark: a non-empty string or a non-empty part list. */
function hasContent(message: AISDKMessageLike): boolean {
  const { content } = message
  return typeof content === 'string' ? content !== '' : Array.isArray(content) && content.length > 0
}

function cacheControl(ttl: CacheTtl | undefined): AISDKCacheControlOptions['anthropic']['cacheControl'] {
  return ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl }
}

/**
 * Builds the AI SDK call fields for one step. Markers follow `toAnthropic`'s
 * rules (the caller's counted at any depth and left as they are; promptloom's
 * within what is left of `ANTHROPIC_MAX_CACHE_MARKERS`: history breakpoint,
 * then system breakpoints latest first; the TTL order rule). Markers on the
 * tools you pass to `generateText` are not visible here: leave room for
 * them with `historyBreakpoint: false` or fewer breakpoints. The snapshot
 * (when non-empty) is a user message after the history — before a trailing
 * run of mid-conversation system messages, which must stay last — and the
 * Anthropic provider folds it into the last user turn, after the tool
 * results. Throws a `TypeError` for bad options, naming the tool or the
 * history index at fault. Inline message literals keep their literal roles
 * and part types (`M` is a `const` type parameter), so the result spreads
 * into `generateText` without annotations.
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
  const { rendered, snapshot } = resolveRequest(FN, options, options?.messages, 'messages')
  const history = options.messages
  checkHistory(FN, 'messages', history, 'required')
  const { historyBreakpoint = true } = options
  if (typeof historyBreakpoint !== 'boolean') throw new TypeError(`${FN} option "historyBreakpoint" must be a boolean (got ${describeValue(historyBreakpoint)})`)
  const ttl = ttlPlanOf(FN, options.ttl)
  const callers = callerMarkersOf(history)
  checkCallerOrder(FN, 'messages', callers)

  const split = snapshot === '' ? history.length : trailingInstructionsStart(history, ['system'])
  let target = -1
  if (historyBreakpoint) for (let i = split - 1; i >= 0 && target === -1; i--) if (hasContent(history[i]!)) target = i
  // A message already marked (itself, or its last part, which its own marker would land on) needs no second marker.
  const content = target === -1 ? undefined : history[target]!.content
  const targetMarked =
    target !== -1 &&
    (markerIn(history[target]!.providerOptions) != null || (Array.isArray(content) && markerIn((content.at(-1) as { providerOptions?: unknown } | null)?.providerOptions) != null))
  const { blocks } = rendered
  const own = placeOwnMarkers({ blocks, tools: false, history: target !== -1 && !targetMarked, callers, beforeHistory: (marker) => marker.message <= target, ttl })

  const system = blocks.map((block, index): AISDKSystemMessage => {
    return own.has(index)
      ? { role: 'system', content: block.text, providerOptions: { anthropic: { cacheControl: cacheControl(own.get(index)) } } }
      : { role: 'system', content: block.text }
  })
  const messages: (M | AISDKSnapshotMessage)[] = history.slice()
  if (own.has('history')) {
    const message = history[target]!
    const providerOptions = (typeof message.providerOptions === 'object' && message.providerOptions !== null ? message.providerOptions : {}) as Record<string, unknown>
    const anthropic = (typeof providerOptions.anthropic === 'object' && providerOptions.anthropic !== null ? providerOptions.anthropic : {}) as Record<string, unknown>
    messages[target] = { ...message, providerOptions: { ...providerOptions, anthropic: { ...anthropic, cacheControl: cacheControl(own.get('history')) } } }
  }
  const keptHistory: (M | AISDKSnapshotMessage)[] = history.slice()
  if (snapshot !== '') {
    messages.splice(split, 0, { role: 'user', content: snapshot })
    keptHistory.splice(split, 0, { role: 'user', content: snapshot })
  }
  const request: AISDKRequest<M> = { system, messages }
  recordHistory(request, keptHistory, history.slice())
  return request
}
