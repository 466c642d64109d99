/** `toOpenAIChat` (SPEC §4.2): the Chat Completions fields promptloom owns; OpenAI caches prefixes without markers. */

import { describeValue } from '../assembly/errors.js'
import { promptCacheKeyOf } from './prompt-cache-key.js'
import { recordHistory } from './request-history.js'
import { resolveRequest, trailingInstructionsStart, type RequestOptions } from './request-input.js'

/** The leading message: `'system'`, or `'developer'` for reasoning models that take instructions that way. */
export type OpenAIChatInstructionMessage = {
  role: 'system'
  content: string
} | {
  role: 'developer'
  content: string
}

/** The snapshot message promptloom adds after the history. */
export type OpenAIChatSnapshotMessage = {
  role: 'user'
  content: string
}

/** Any message of the caller's history (the SDK's `ChatCompletionMessageParam` fits). */
export type OpenAIChatMessageLike = {
  readonly role: string
}

/** A function tool of the Chat Completions API. */
export type OpenAIChatTool = {
  type: 'function'
  function: {
    name: string
    description: string
    parameters: Record<string, unknown>
  }
}

/** Options of `toOpenAIChat`. */
export interface OpenAIChatRequestOptions<M extends OpenAIChatMessageLike> extends RequestOptions {
  /** The conversation after the system message, in the Chat Completions format. Never mutated. */
  readonly messages: readonly M[]
  /** The role of the leading prompt message. Default `'system'`. */
  readonly role?: 'system' | 'developer'
  /** Sent as `prompt_cache_key`: at most 64 characters, or `true` for `'pl-'` + a digest of the tools and the blocks before the first volatile one. */
  readonly promptCacheKey?: string | true
}

/** The request fields `toOpenAIChat` returns, ready to spread into `client.chat.completions.create`. */
export interface OpenAIChatRequest<M extends OpenAIChatMessageLike> {
  /** `[prompt message, ...history, snapshot message?]`: a new array; the caller's messages are shared, not copied. */
  messages: (OpenAIChatInstructionMessage | M | OpenAIChatSnapshotMessage)[]
  tools: OpenAIChatTool[]
  prompt_cache_key?: string
}

/**
 * Builds the Chat Completions request fields for one step: the prompt as a leading system (or developer) message, the
 * history with the snapshot as a user message before trailing system or developer messages, and the tools. Throws a
 * `TypeError` naming the bad option, tool or history index.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai'
 * import { historyOf, toOpenAIChat, usageFromOpenAI } from 'promptloom'
 *
 * const client = new OpenAI()
 * let history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Which test fails?' }]
 * const result = surface.step({ assembly })
 * const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
 * const request = toOpenAIChat({ assembly, rendered: result.rendered, messages: history, snapshot, promptCacheKey: true })
 * const completion = await client.chat.completions.create({ model: 'gpt-5', ...request })
 * history = [...historyOf(request), completion.choices[0]!.message] // as sent, without the system message
 * surface.observeUsage(usageFromOpenAI(completion.usage!))
 * ```
 */
export function toOpenAIChat<M extends OpenAIChatMessageLike>(options: OpenAIChatRequestOptions<M>): OpenAIChatRequest<M> {
  const fn = 'toOpenAIChat'
  const { rendered, tools, snapshot } = resolveRequest(fn, options, options?.messages, 'messages', 'optional')
  const role = options.role ?? 'system'
  if (role !== 'system' && role !== 'developer') {
    throw new TypeError(`toOpenAIChat option "role" must be 'system' or 'developer' (got ${describeValue(role)})`)
  }
  const key = promptCacheKeyOf(fn, options.promptCacheKey, tools, rendered)
  const history: (M | OpenAIChatSnapshotMessage)[] = options.messages.slice()
  if (snapshot !== '') history.splice(trailingInstructionsStart(options.messages, ['system', 'developer']), 0, { role: 'user', content: snapshot })
  const request: OpenAIChatRequest<M> = {
    messages: [{ role, content: rendered.text }, ...history],
    tools: tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters as Record<string, unknown> },
    })),
  }
  if (key !== undefined) request.prompt_cache_key = key
  recordHistory(request, history, options.messages.slice())
  return request
}
