import { generateText, streamText, type LanguageModel, type ModelMessage } from 'ai'
import { describe, expectTypeOf, test } from 'vitest'
import { historyOf, toAISDK, type PromptAssembly } from '../../src/index.js'

// Inline history literals spread into the AI SDK's calls: the roles (and part
// types) keep their literal types, so the call type-checks without a cast or
// an annotation. Checked by `npm run typecheck`; the functions never run.

declare const assembly: PromptAssembly
declare const model: LanguageModel

describe('toAISDK with inline messages', () => {
  test('a user message literal spreads into generateText, inline or from a variable', () => {
    const inline = () => generateText({ model, ...toAISDK({ assembly, messages: [{ role: 'user', content: 'hi' }] }) })
    const request = () => toAISDK({ assembly, messages: [{ role: 'user', content: 'hi' }] })
    const later = () => generateText({ model, ...request() })
    expectTypeOf(inline).toBeFunction()
    expectTypeOf(later).toBeFunction()
  })

  test('a conversation literal with text, tool-call and tool-result parts spreads into generateText and streamText', () => {
    const request = () =>
      toAISDK({
        assembly,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Fix the login test.' }] },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'login.ts' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: '…' } }] },
          { role: 'system', content: 'Answer briefly.' },
        ],
      })
    const call = () => generateText({ model, ...request() })
    const stream = () => streamText({ model, ...request() })
    const history = () => historyOf(request())
    expectTypeOf(call).toBeFunction()
    expectTypeOf(stream).toBeFunction()
    expectTypeOf(history).returns.toExtend<ModelMessage[]>()
  })

  test('an unknown role is a type error', () => {
    // @ts-expect-error 'robot' is no model message role
    const request = () => toAISDK({ assembly, messages: [{ role: 'robot', content: 'hi' }] })
    expectTypeOf(request).toBeFunction()
  })
})
