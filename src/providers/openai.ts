/** `toOpenAIChat` and `toOpenAIResponses` (SPEC §4.2, §4.3): the fields promptloom owns; OpenAI caches without markers. */

import { describeValue, optionError } from '../assembly/errors.js'
import type { ToolSchema } from '../assembly/types.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'
import { fnv1a64 } from './fnv1a64.js'
import { recorded, resolveRequest, trailingInstructionsStart, withSnapshot, type RequestOptions } from './request.js'

/** The roles whose trailing run the snapshot goes before: the request's instructions. */
const INSTRUCTION_ROLES = ['system', 'developer']

/** The leading message: `'system'`, or `'developer'` for reasoning models that take instructions that way. */
export type OpenAIChatInstructionMessage = { role: 'system'; content: string } | { role: 'developer'; content: string }

/** The snapshot message promptloom adds after the history. */
export type OpenAIChatSnapshotMessage = { role: 'user'; content: string }

/** Any message of the caller's history (the SDK's `ChatCompletionMessageParam` fits). */
export type OpenAIChatMessageLike = { readonly role: string }

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
  /** Absent when the assembly has no tools: Chat Completions rejects an empty `tools` array. */
  tools?: OpenAIChatTool[]
  prompt_cache_key?: string
}

/** The snapshot input item promptloom appends (an easy input message). */
export type OpenAIResponsesSnapshotItem = OpenAIChatSnapshotMessage

/** A function tool of the Responses API. */
export type OpenAIResponsesTool = {
  type: 'function'
  name: string
  description: string
  parameters: Record<string, unknown>
  /** promptloom's schemas are not strict-mode schemas. */
  strict: false
}

/** Options of `toOpenAIResponses`. */
export interface OpenAIResponsesRequestOptions<I extends object> extends RequestOptions {
  /** The input items so far (the SDK's `ResponseInputItem`s fit). Never mutated. */
  readonly input: readonly I[]
  /** Sent as `prompt_cache_key`: a string of at most 64 characters, or `true` to derive it (see `toOpenAIChat`). */
  readonly promptCacheKey?: string | true
}

/** The request fields `toOpenAIResponses` returns, ready to spread into `client.responses.create`. */
export interface OpenAIResponsesRequest<I extends object> {
  instructions: string
  input: (I | OpenAIResponsesSnapshotItem)[]
  tools: OpenAIResponsesTool[]
  prompt_cache_key?: string
}

/** The `prompt_cache_key` field for `fn`'s `promptCacheKey` (`true`: `'pl-'` + a digest of the tools and stable blocks). */
function promptCacheKeyOf(fn: string, option: unknown, tools: readonly ToolSchema[], rendered: RenderedPrompt) {
  if (option === undefined) return {}
  if (option === true) {
    const declared = JSON.stringify(tools.map((tool) => [tool.name, tool.description, tool.parameters]))
    const volatile = rendered.blocks.findIndex((block) => block.stability === 'volatile')
    const stableRun = rendered.blocks.slice(0, volatile === -1 ? undefined : volatile).map((block) => block.text).join('\n\n')
    return { prompt_cache_key: `pl-${fnv1a64(new TextEncoder().encode(`${declared}\u0000${stableRun}`))}` }
  }
  if (typeof option === 'string' && option !== '' && option.length <= 64) return { prompt_cache_key: option }
  throw new TypeError(
    `${fn} option "promptCacheKey" must be true (derive it from the tools and the stable prompt) or a non-empty string of at most 64 characters (got ${typeof option === 'string' ? `a string of ${option.length} characters` : describeValue(option)})`,
  )
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
  const { rendered, tools, snapshot } = resolveRequest('toOpenAIChat', options, options?.messages, 'messages', 'optional')
  const role = options.role ?? 'system'
  if (role !== 'system' && role !== 'developer') throw optionError('toOpenAIChat', 'role', "'system' or 'developer'", role)
  const history = withSnapshot(options.messages, snapshot, trailingInstructionsStart(options.messages, INSTRUCTION_ROLES))
  return recorded<OpenAIChatRequest<M>>({
    messages: [{ role, content: rendered.text }, ...history],
    ...(tools.length > 0 && {
      tools: tools.map(({ name, description, parameters }) => ({ type: 'function' as const, function: { name, description, parameters } })),
    }),
    ...promptCacheKeyOf('toOpenAIChat', options.promptCacheKey, tools, rendered),
  }, history, options.messages)
}

/**
 * Builds the Responses API request fields for one step: the prompt as `instructions`, the input with the snapshot as a
 * user item before trailing system or developer messages, and the tools. Throws a `TypeError` naming the bad option, tool or input index.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai'
 * import { toOpenAIResponses, usageFromOpenAI } from 'promptloom'
 *
 * const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Which test fails?' }]
 * const result = surface.step({ assembly })
 * const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
 * const request = toOpenAIResponses({ assembly, rendered: result.rendered, input, snapshot, promptCacheKey: true })
 * const response = await new OpenAI().responses.create({ model: 'gpt-5', ...request })
 * surface.observeUsage(usageFromOpenAI(response.usage!))
 * ```
 */
export function toOpenAIResponses<I extends object>(options: OpenAIResponsesRequestOptions<I>): OpenAIResponsesRequest<I> {
  const { rendered, tools, snapshot } = resolveRequest('toOpenAIResponses', options, options?.input, 'input', 'optional')
  const input = withSnapshot(options.input, snapshot, trailingInstructionsStart(options.input, INSTRUCTION_ROLES))
  return recorded<OpenAIResponsesRequest<I>>({
    instructions: rendered.text,
    input,
    tools: tools.map(({ name, description, parameters }) => ({ type: 'function', name, description, parameters, strict: false })),
    ...promptCacheKeyOf('toOpenAIResponses', options.promptCacheKey, tools, rendered),
  }, input.slice(), options.input)
}
