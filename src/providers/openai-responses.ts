/**
 * `toOpenAIResponses` (SPEC §4.2): the Responses API fields promptloom owns —
 * `instructions` (the rendered prompt), the input items with the
 * runtime-context snapshot appended, and the function tools.
 */

import { resolveRequest, type RequestOptions } from './request-input.js'

/** The snapshot input item promptloom appends (an easy input message). */
export type OpenAIResponsesSnapshotItem = {
  /** Always `'user'`. */
  role: 'user'
  /** The runtime-context snapshot. */
  content: string
}

/** A function tool of the Responses API. */
export type OpenAIResponsesTool = {
  /** Always `'function'`. */
  type: 'function'
  /** The tool's name, as the model calls it. */
  name: string
  /** What the tool does, for the model. */
  description: string
  /** The JSON Schema of the tool's arguments. */
  parameters: Record<string, unknown>
  /** Always `false`: promptloom's schemas are not strict-mode schemas. */
  strict: false
}

/** Options of `toOpenAIResponses`. */
export interface OpenAIResponsesRequestOptions<I extends object> extends RequestOptions {
  /** The input items so far (the SDK's `ResponseInputItem`s fit). Never mutated. */
  readonly input: readonly I[]
}

/** The request fields `toOpenAIResponses` returns, ready to spread into `client.responses.create`. */
export interface OpenAIResponsesRequest<I extends object> {
  /** The rendered system prompt. */
  instructions: string
  /** `[...input, snapshot item?]`: a new array. */
  input: (I | OpenAIResponsesSnapshotItem)[]
  /** The assembly's tools, in order, `strict: false` (promptloom's schemas are not strict-mode schemas). */
  tools: OpenAIResponsesTool[]
}

/**
 * Builds the Responses API request fields for one step; the snapshot (when
 * non-empty) is a user input item after the given input. Throws a
 * `TypeError` for bad options (see `resolveRequest`).
 */
export function toOpenAIResponses<I extends object>(options: OpenAIResponsesRequestOptions<I>): OpenAIResponsesRequest<I> {
  const { rendered, tools, snapshot } = resolveRequest('toOpenAIResponses', options, options?.input, 'input')
  const input: (I | OpenAIResponsesSnapshotItem)[] = options.input.slice()
  if (snapshot !== '') input.push({ role: 'user', content: snapshot })
  return {
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
}
