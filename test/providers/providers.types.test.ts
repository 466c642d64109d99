import type Anthropic from '@anthropic-ai/sdk'
import type { LanguageModelUsage, ModelMessage, SystemModelMessage } from 'ai'
import type OpenAI from 'openai'
import { describe, expectTypeOf, test } from 'vitest'
import {
  historyOf,
  toAISDK,
  toAnthropic,
  toOpenAIChat,
  toOpenAIResponses,
  usageFromAISDK,
  usageFromAnthropic,
  usageFromDeepSeek,
  usageFromOpenAI,
  type AISDKRequest,
  type AnthropicRequest,
  type AnthropicTextBlock,
  type AnthropicTool,
  type ObservedUsage,
  type OpenAIChatRequest,
  type OpenAIChatTool,
  type OpenAIResponsesRequest,
  type OpenAIResponsesTool,
} from '../../src/index.js'

// Structural compatibility with the official SDKs' parameter types, checked by
// `npm run typecheck` (vitest also runs these as no-op tests).

type AnthropicParams = Anthropic.MessageCreateParamsNonStreaming
type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming
type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming

describe('@anthropic-ai/sdk', () => {
  test('system blocks, tools and the default history fit MessageCreateParams', () => {
    expectTypeOf<AnthropicTextBlock>().toExtend<Anthropic.TextBlockParam>()
    expectTypeOf<AnthropicTool>().toExtend<Anthropic.Tool>()
    expectTypeOf<AnthropicTool>().toExtend<Anthropic.ToolUnion>()
    expectTypeOf<AnthropicRequest<Anthropic.MessageParam>>().toExtend<Pick<AnthropicParams, 'system' | 'tools' | 'messages'>>()
  })

  test("toAnthropic accepts the SDK's MessageParam history and returns SDK messages", () => {
    expectTypeOf(toAnthropic<Anthropic.MessageParam>).parameter(0).toHaveProperty('messages').toEqualTypeOf<readonly Anthropic.MessageParam[]>()
    expectTypeOf<ReturnType<typeof toAnthropic<Anthropic.MessageParam>>['messages']>().toExtend<Anthropic.MessageParam[]>()
  })

  test('historyOf gives back SDK messages', () => {
    expectTypeOf(() => historyOf({} as AnthropicRequest<Anthropic.MessageParam>)).returns.toExtend<Anthropic.MessageParam[]>()
  })

  test('the usage reader takes the SDK Usage', () => {
    expectTypeOf(usageFromAnthropic).toBeCallableWith({} as Anthropic.Usage)
    expectTypeOf(usageFromAnthropic).returns.toExtend<ObservedUsage>()
  })
})

describe('openai', () => {
  test('chat messages and tools fit ChatCompletionCreateParams', () => {
    expectTypeOf<OpenAIChatTool>().toExtend<OpenAI.Chat.ChatCompletionTool>()
    expectTypeOf<OpenAIChatRequest<OpenAI.Chat.ChatCompletionMessageParam>>().toExtend<Pick<ChatParams, 'messages' | 'tools'>>()
    expectTypeOf<ReturnType<typeof toOpenAIChat<OpenAI.Chat.ChatCompletionMessageParam>>>().toExtend<Pick<ChatParams, 'messages' | 'tools' | 'prompt_cache_key'>>()
    expectTypeOf(() => historyOf({} as OpenAIChatRequest<OpenAI.Chat.ChatCompletionMessageParam>)).returns.toExtend<OpenAI.Chat.ChatCompletionMessageParam[]>()
  })

  test('responses instructions, input and tools fit ResponseCreateParams', () => {
    expectTypeOf<OpenAIResponsesTool>().toExtend<OpenAI.Responses.FunctionTool>()
    expectTypeOf<OpenAIResponsesRequest<OpenAI.Responses.ResponseInputItem>>().toExtend<Pick<ResponsesParams, 'instructions' | 'input' | 'tools'>>()
    expectTypeOf<ReturnType<typeof toOpenAIResponses<OpenAI.Responses.ResponseInputItem>>>().toExtend<
      Pick<ResponsesParams, 'instructions' | 'input' | 'tools' | 'prompt_cache_key'>
    >()
    expectTypeOf(() => historyOf({} as OpenAIResponsesRequest<OpenAI.Responses.ResponseInputItem>)).returns.toExtend<OpenAI.Responses.ResponseInputItem[]>()
  })

  test('the usage reader takes chat and responses usage', () => {
    expectTypeOf(usageFromOpenAI).toBeCallableWith({} as OpenAI.CompletionUsage)
    expectTypeOf(usageFromOpenAI).toBeCallableWith({} as OpenAI.Responses.ResponseUsage)
    expectTypeOf(usageFromDeepSeek).toBeCallableWith({ prompt_tokens: 10, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 10 })
  })
})

describe('ai', () => {
  test('system messages and the history fit generateText', () => {
    expectTypeOf<AISDKRequest<ModelMessage>['system']>().toExtend<SystemModelMessage[]>()
    expectTypeOf<ReturnType<typeof toAISDK<ModelMessage>>['messages']>().toExtend<ModelMessage[]>()
    expectTypeOf(() => historyOf({} as AISDKRequest<ModelMessage>)).returns.toExtend<ModelMessage[]>()
  })

  test("usageFromAISDK takes the AI SDK's LanguageModelUsage", () => {
    expectTypeOf(usageFromAISDK).toBeCallableWith({} as LanguageModelUsage)
  })
})
