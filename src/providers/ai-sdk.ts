/**
 * `toAISDK` (SPEC §4.2): `system` and `messages` for a Vercel AI SDK
 * `generateText` / `streamText` call or a `prepareStep` result — one system
 * model message per `PromptBlock`, breakpoint blocks with Anthropic's
 * `cacheControl` provider option (other providers ignore it).
 */

import { ANTHROPIC_MAX_CACHE_MARKERS } from './anthropic.js'
import { resolveRequest, type RequestOptions } from './request-input.js'

/** The Anthropic provider option that marks a cache breakpoint. */
export type AISDKCacheControlOptions = {
  /** The Anthropic provider's options. */
  anthropic: {
    /** Marks the message as a cache breakpoint. */
    cacheControl: {
      /** Always `'ephemeral'`, Anthropic's only cache type. */
      type: 'ephemeral'
    }
  }
}

/** A system model message (the AI SDK's `SystemModelMessage` shape). */
export type AISDKSystemMessage = {
  /** Always `'system'`. */
  role: 'system'
  /** One `PromptBlock`'s text. */
  content: string
  /** Present on a breakpoint block: Anthropic's cache-control option. */
  providerOptions?: AISDKCacheControlOptions
}

/** The snapshot message promptloom appends. */
export type AISDKSnapshotMessage = {
  /** Always `'user'`. */
  role: 'user'
  /** The runtime-context snapshot. */
  content: string
}

/** Any model message of the caller's history (the AI SDK's `ModelMessage` fits). */
export type AISDKMessageLike = {
  /** The message's role (`'system'`, `'user'`, `'assistant'` or `'tool'`). */
  readonly role: string
  /** The message's provider options; an Anthropic cache marker here counts against `ANTHROPIC_MAX_CACHE_MARKERS`. */
  readonly providerOptions?: unknown
  /** The message's content: a string or parts, whose `providerOptions` cache markers count too. */
  readonly content?: unknown
}

/** Options of `toAISDK`. */
export interface AISDKRequestOptions<M extends AISDKMessageLike> extends RequestOptions {
  /** The conversation so far as AI SDK model messages. Never mutated. */
  readonly messages: readonly M[]
}

/** The call fields `toAISDK` returns, ready to spread into `generateText` or return from `prepareStep`. */
export interface AISDKRequest<M extends AISDKMessageLike> {
  /** One system message per block. */
  system: AISDKSystemMessage[]
  /** `[...messages, snapshot message?]`: a new array. */
  messages: (M | AISDKSnapshotMessage)[]
}

/**
 * Builds the AI SDK call fields for one step. Breakpoint blocks carry the
 * cache-control option, at most `ANTHROPIC_MAX_CACHE_MARKERS` in all counting
 * those already in `messages` (message or part `providerOptions`), keeping
 * the latest. The snapshot (when non-empty) is a user message after the
 * history; the Anthropic provider folds it into the last user turn, after
 * the tool results. Throws a `TypeError` for bad options (see `resolveRequest`).
 */
export function toAISDK<M extends AISDKMessageLike>(options: AISDKRequestOptions<M>): AISDKRequest<M> {
  const { rendered, snapshot } = resolveRequest('toAISDK', options, options?.messages, 'messages')
  const budget = Math.max(0, ANTHROPIC_MAX_CACHE_MARKERS - markersIn(options.messages))
  const breakpoints: number[] = []
  rendered.blocks.forEach((block, index) => block.cacheBreakpoint && breakpoints.push(index))
  const kept = new Set(budget === 0 ? [] : breakpoints.slice(-budget))
  const system = rendered.blocks.map((block, index): AISDKSystemMessage =>
    kept.has(index)
      ? { role: 'system', content: block.text, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }
      : { role: 'system', content: block.text },
  )
  const messages: (M | AISDKSnapshotMessage)[] = options.messages.slice()
  if (snapshot !== '') messages.push({ role: 'user', content: snapshot })
  return { system, messages }
}

function hasMarker(providerOptions: unknown): boolean {
  if (typeof providerOptions !== 'object' || providerOptions === null) return false
  const anthropic = (providerOptions as { anthropic?: { cacheControl?: unknown; cache_control?: unknown } }).anthropic
  return anthropic != null && (anthropic.cacheControl != null || anthropic.cache_control != null)
}

function markersIn(history: readonly AISDKMessageLike[]): number {
  let count = 0
  for (const message of history) {
    if (typeof message !== 'object' || message === null) continue
    if (hasMarker(message.providerOptions)) count++
    if (Array.isArray(message.content)) {
      for (const part of message.content as unknown[]) if (hasMarker((part as { providerOptions?: unknown } | null)?.providerOptions)) count++
    }
  }
  return count
}
