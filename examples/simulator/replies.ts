// The response bodies the simulator answers: the shape each official SDK parses, with the usage the
// cache rules computed. Only what the model "says" is scripted (text or one tool call).

import type { AnthropicCacheUsage } from './anthropic-cache.js'
import type { DeepSeekCacheUsage } from './deepseek-cache.js'
import type { OpenAICacheResult } from './openai-cache.js'
import type { JsonObject } from './prompt-units.js'

/** What the model "says": plain text, or one tool call. */
export type SimulatedReply = { readonly text: string } | { readonly tool: { readonly name: string; readonly input: JsonObject } }

const CREATED = 1_700_000_000

/** The reply as text, for counting output tokens. */
export function replyText(reply: SimulatedReply): string {
  return 'text' in reply ? reply.text : `${reply.tool.name}${JSON.stringify(reply.tool.input)}`
}

export function anthropicMessage(model: string, n: number, reply: SimulatedReply, usage: AnthropicCacheUsage, outputTokens: number): JsonObject {
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content: 'text' in reply ? [{ type: 'text', text: reply.text }] : [{ type: 'tool_use', id: `toolu_${n}`, name: reply.tool.name, input: reply.tool.input }],
    stop_reason: 'text' in reply ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { ...usage, output_tokens: outputTokens, service_tier: 'standard' },
  }
}

/** A Chat Completions response; DeepSeek answers the same shape with its own usage fields. */
export function chatCompletion(model: string, n: number, reply: SimulatedReply, usage: JsonObject): JsonObject {
  const message =
    'text' in reply
      ? { role: 'assistant', content: reply.text, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: reply.tool.name, arguments: JSON.stringify(reply.tool.input) } }],
        }
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: CREATED + n,
    model,
    choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls', logprobs: null }],
    usage,
  }
}

export function openAIChatUsage({ promptTokens, cachedTokens }: OpenAICacheResult, outputTokens: number): JsonObject {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }
}

/** DeepSeek's usage: `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`, and no `prompt_tokens_details`. */
export function deepSeekUsage(usage: DeepSeekCacheUsage, outputTokens: number): JsonObject {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: outputTokens,
    total_tokens: usage.prompt_tokens + outputTokens,
    prompt_cache_hit_tokens: usage.prompt_cache_hit_tokens,
    prompt_cache_miss_tokens: usage.prompt_cache_miss_tokens,
    completion_tokens_details: { reasoning_tokens: 0 },
  }
}

export function openAIResponse(body: JsonObject, n: number, reply: SimulatedReply, { promptTokens, cachedTokens }: OpenAICacheResult, outputTokens: number): JsonObject {
  const output =
    'text' in reply
      ? [{ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: reply.text, annotations: [] }] }]
      : [{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: reply.tool.name, arguments: JSON.stringify(reply.tool.input), status: 'completed' }]
  return {
    id: `resp_${n}`,
    object: 'response',
    created_at: CREATED + n,
    status: 'completed',
    model: body.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: body.tools ?? [],
    usage: {
      input_tokens: promptTokens,
      input_tokens_details: { cached_tokens: cachedTokens },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: promptTokens + outputTokens,
    },
  }
}

/** The error body each provider answers. */
export function errorBody(provider: 'anthropic' | 'openai', type: string, message: string): JsonObject {
  return provider === 'anthropic' ? { type: 'error', error: { type, message } } : { error: { message, type, param: null, code: null } }
}
