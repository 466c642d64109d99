/** `toAISDK` (SPEC §4.2, §4.3): `system` and `messages` for a Vercel AI SDK call, with Anthropic's cache markers. */

import { blocksOf, lastMarkable, resolveMarkedRequest, type CacheTtlOption, type MarkerFormat } from './cache-markers.js'
import type { AnthropicCacheControl } from './anthropic.js'
import type { OpenAIChatSnapshotMessage } from './openai.js'
import { recorded, trailingInstructionsStart, withSnapshot, type RequestOptions } from './request.js'

/** The Anthropic provider option that marks a cache breakpoint (no `ttl`: 5 minutes). */
export type AISDKCacheControlOptions = { anthropic: { cacheControl: AnthropicCacheControl } }

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

/** A cache marker in `providerOptions`, under either spelling and any provider key (a provider may read its own, not `anthropic`). */
function markerIn(providerOptions: unknown): unknown {
  const markers = Object.values(objectOr(providerOptions)).map(objectOr)
  return markers.map((options) => options.cacheControl ?? options.cache_control).find((marker) => marker != null)
}

/** Markers sit in `providerOptions` (of a message or a part); a tool call's `input` and a JSON output's `value` are data. */
const MARKERS: MarkerFormat<AISDKMessageLike> = {
  markerOf: (node) => markerIn((node as { providerOptions?: unknown }).providerOptions),
  skip: (node, key) =>
    key === 'input' || key === 'providerOptions' || (key === 'value' && /json$/.test(String(objectOr(node).type))),
  onMessage: true,
  marksTools: false,
  // The AI SDK runs approved tools only when the history ends in the tool message approving them: the snapshot then goes
  // before the assistant message that asked for approval.
  snapshotAt: (history, split) => {
    const approving = blocksOf(history[split - 1]?.content).some((part) => objectOr(part).type === 'tool-approval-response')
    if (split < history.length || !approving) return split
    const at = trailingInstructionsStart(history, ['tool'])
    return history[at - 1]?.role === 'assistant' ? at - 1 : at
  },
  // The message itself when that part ends it (the provider puts a message's marker on its last part), else the part.
  // The AI SDK sends no approval parts (a provider-executed tool's aside), so they carry none.
  historyTarget: (history, end) => {
    const at = lastMarkable(history, end, ['reasoning', 'tool-approval-request', 'tool-approval-response'])
    if (at === undefined) return undefined
    const { message, block, blocks } = at
    const ends = block === blocks.length - 1
    const part = blocks[block] as { providerOptions?: unknown }
    const marked = markerIn(part.providerOptions) ?? (ends ? markerIn(history[message]!.providerOptions) : undefined)
    return marked != null ? undefined : { message, block: ends ? Infinity : block }
  },
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
  const { blocks, snapshot, history, split, own, target } = resolveMarkedRequest('toAISDK', options, MARKERS)
  const system = blocks.map((block, index): AISDKSystemMessage => ({
    role: 'system',
    content: block.text,
    ...(own.has(index) && { providerOptions: { anthropic: { cacheControl: own.get(index)! } } }),
  }))
  const kept = withSnapshot(history, snapshot, split)
  const messages = kept.slice()
  if (target !== undefined) {
    const message = history[target.message]!
    const mark = <N extends { providerOptions?: unknown }>(node: N): N => {
      const options = objectOr(node.providerOptions)
      return { ...node, providerOptions: { ...options, anthropic: { ...objectOr(options.anthropic), cacheControl: own.get('history')! } } }
    }
    messages[target.message] =
      target.block === Infinity
        ? mark(message)
        : { ...message, content: (message.content as object[]).map((part, i) => (i === target.block ? mark(part) : part)) }
  }
  return recorded({ system, messages }, kept, history)
}
