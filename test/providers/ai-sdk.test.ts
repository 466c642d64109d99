import { createAnthropic } from '@ai-sdk/anthropic'
import { generateText, type ModelMessage } from 'ai'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSimulator, type Simulator } from '../../examples/simulator/index.js'
import { createStepSurface, toAISDK, usageFromAnthropic } from '../../src/index.js'
import { ASSEMBLY, PROMPT, promptOf, SNAPSHOT } from './fixtures.js'

const EPHEMERAL = { type: 'ephemeral' }

const HISTORY: ModelMessage[] = [
  { role: 'user', content: 'Fix the failing test.' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'toolu_1', toolName: 'read', input: { path: 'a.ts' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'read', output: { type: 'text', value: 'expect(1).toBe(2)' } }] },
]

let server: Simulator
beforeAll(async () => {
  server = await startSimulator({ reply: () => ({ text: 'Done.' }) })
})
afterAll(() => server.close())

describe('toAISDK through generateText and @ai-sdk/anthropic', () => {
  test('the Anthropic request has one system block per PromptBlock with cache_control on breakpoints, and the snapshot after the tool result', async () => {
    const history = structuredClone(HISTORY)
    const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${server.url}/v1` })
    const surface = createStepSurface()
    surface.step({ assembly: ASSEMBLY })
    const result = await generateText({
      model: anthropic('claude-sonnet-4-6'),
      maxRetries: 0,
      ...toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: history }),
    })
    const { body, promptTokens, cachedTokens } = server.requests.at(-1)!
    expect(body.system).toEqual([
      { type: 'text', text: PROMPT.blocks[0]!.text, cache_control: EPHEMERAL },
      { type: 'text', text: PROMPT.blocks[1]!.text, cache_control: EPHEMERAL },
      { type: 'text', text: PROMPT.blocks[2]!.text },
    ])
    // The provider folds the tool message and the snapshot message into one user turn; the history
    // breakpoint (the tool message's cacheControl) lands on the tool result, right before the snapshot.
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'expect(1).toBe(2)', cache_control: EPHEMERAL },
        { type: 'text', text: SNAPSHOT },
      ],
    })
    expect(history).toEqual(HISTORY)
    expect(result.text).toBe('Done.')
    // The AI SDK hands back the provider's raw usage; the Anthropic reader maps it.
    const raw = result.response.body as { usage: Parameters<typeof usageFromAnthropic>[0] }
    expect(surface.observeUsage(usageFromAnthropic(raw.usage))).toMatchObject({ inputTokens: promptTokens, cachedInputTokens: cachedTokens })
  })
})

describe('toAISDK', () => {
  test('system messages carry the Anthropic cacheControl option on breakpoint blocks only', () => {
    expect(toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: [], snapshot: false }).system).toEqual([
      { role: 'system', content: PROMPT.blocks[0]!.text, providerOptions: { anthropic: { cacheControl: EPHEMERAL } } },
      { role: 'system', content: PROMPT.blocks[1]!.text, providerOptions: { anthropic: { cacheControl: EPHEMERAL } } },
      { role: 'system', content: PROMPT.blocks[2]!.text },
    ])
  })

  test('markers in the history count toward the limit of 4 (the latest system breakpoints are kept)', () => {
    const marked: ModelMessage[] = [1, 2, 3].map((n) => ({ role: 'user', content: `${n}`, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }))
    const five = promptOf(['a', 'b'].map((name) => [name, name, 'static', true] as const))
    const { system } = toAISDK({ assembly: ASSEMBLY, rendered: five, messages: marked, snapshot: false })
    expect(system.map((message) => message.providerOptions !== undefined)).toEqual([false, true])
  })

  test('the snapshot is a user message after the history', () => {
    expect(toAISDK({ assembly: ASSEMBLY, rendered: PROMPT, messages: HISTORY, historyBreakpoint: false }).messages).toEqual([...HISTORY, { role: 'user', content: SNAPSHOT }])
  })

  test('a history that is not an array is a TypeError naming it', () => {
    expect(() => toAISDK({ assembly: ASSEMBLY, messages: {} as never })).toThrow(/toAISDK option "messages" must be an array/)
  })
})
