/** `toOpenAIResponses` (SPEC §4.2): the Responses API fields promptloom owns. */

import type { OpenAIChatSnapshotMessage } from './openai-chat.js'
import { promptCacheKeyOf } from './prompt-cache-key.js'
import { recordHistory } from './request-history.js'
import { resolveRequest, trailingInstructionsStart, type RequestOptions } from './request-input.js'

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
  const fn = 'toOpenAIResponses'
  const { rendered, tools, snapshot } = resolveRequest(fn, options, options?.input, 'input', 'optional')
  const key = promptCacheKeyOf(fn, options.promptCacheKey, tools, rendered)
  const input: (I | OpenAIResponsesSnapshotItem)[] = options.input.slice()
  if (snapshot !== '') input.splice(trailingInstructionsStart(options.input, ['system', 'developer']), 0, { role: 'user', content: snapshot })
  const request: OpenAIResponsesRequest<I> = {
    instructions: rendered.text,
    input,
    tools: tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as Record<string, unknown>,
      strict: false,
    })),
  }
  if (key !== undefined) request.prompt_cache_key = key
  recordHistory(request, input.slice(), options.input.slice())
  return request
}
