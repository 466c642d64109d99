// The simulator without HTTP: one clock, one cache per provider, the scripted replies, the record of
// every exchange. server.ts puts it on 127.0.0.1 for the SDK clients; tests and benches may call
// `handle` directly.

import { AnthropicCache } from './anthropic-cache.js'
import { DeepSeekCache } from './deepseek-cache.js'
import { OpenAICache } from './openai-cache.js'
import { NO_TOKENS, prefixBySection, type SectionTokens } from './prompt-sections.js'
import { isObject, TokenMeter, type JsonObject } from './prompt-units.js'
import { badRequest, ProviderError } from './provider-error.js'
import { anthropicMessage, chatCompletion, deepSeekUsage, errorBody, openAIChatUsage, openAIResponse, replyText, type SimulatedReply } from './replies.js'

export type SimulatedProvider = 'anthropic' | 'openai-chat' | 'openai-responses' | 'deepseek'

/** One request and what the simulator answered. */
export interface SimulatedExchange {
  /** 1 for the first request. */
  readonly n: number
  /** `undefined` when the path matched no provider (answered 404). */
  readonly provider: SimulatedProvider | undefined
  readonly path: string
  // The parsed JSON body as the SDK sent it (any, so tests can read nested fields without casts).
  readonly body: Record<string, any>
  /** The simulated time of the request (ms). */
  readonly at: number
  readonly status: number
  /** The JSON body answered: the provider's response, or its error body. */
  readonly response: JsonObject
  /** Input tokens in all, of them read from the cache, and of them written to it (0 on an error). */
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly cacheWriteTokens: number
  /** `promptTokens` and `cachedTokens` split into tools, system and messages, the prefix order (all 0 on an error). */
  readonly promptTokensBySection: SectionTokens
  readonly cachedTokensBySection: SectionTokens
}

type Outcome = Omit<SimulatedExchange, 'n' | 'provider' | 'path' | 'body' | 'at'>

export interface SimulatorOptions {
  /** The clock (ms); default a clock that starts at 0 and moves only with `advance`. */
  readonly now?: () => number
  /** The model's answer to the n-th request; default the text "ok". */
  readonly reply?: (request: { readonly provider: SimulatedProvider; readonly body: Record<string, any>; readonly n: number }) => SimulatedReply
  /** Anthropic minimum cacheable tokens by model id prefix, over the documented table. */
  readonly anthropicMinimumTokens?: Readonly<Record<string, number>>
  /** OpenAI requests per route per minute before the overflow; default 15, `Infinity` for none. */
  readonly openaiOverflowPerMinute?: number
}

export interface CacheSimulator {
  /** Every exchange so far, in order (the simulator appends to this array). */
  readonly requests: readonly SimulatedExchange[]
  /** The simulated time: `now()` of the clock plus everything advanced. */
  now(): number
  /** Moves the clock forward by `ms` (a finite number ≥ 0; else a TypeError). */
  advance(ms: number): void
  /** Serves one request: `path` as the SDK requested it, `body` the parsed JSON (or the raw text). */
  handle(path: string, body: unknown): SimulatedExchange
}

/** The provider a request path belongs to (the SDKs append these to their base URLs). */
export function providerOf(path: string): SimulatedProvider | undefined {
  const pathname = path.split('?')[0]!
  if (pathname.endsWith('/messages')) return 'anthropic'
  if (pathname.endsWith('/chat/completions')) return pathname.startsWith('/deepseek/') ? 'deepseek' : 'openai-chat'
  if (pathname.endsWith('/responses')) return 'openai-responses'
  return undefined
}

/** A simulator with fresh, empty caches. */
export function createCacheSimulator(options: SimulatorOptions = {}): CacheSimulator {
  const clock = options.now ?? (() => 0)
  const reply = options.reply ?? (() => ({ text: 'ok' }))
  const meter = new TokenMeter()
  const anthropic = new AnthropicCache(meter, options.anthropicMinimumTokens)
  const openai = new OpenAICache(meter, { overflowPerMinute: options.openaiOverflowPerMinute })
  const deepseek = new DeepSeekCache(meter)
  const requests: SimulatedExchange[] = []
  let advanced = 0
  const now = (): number => clock() + advanced

  function serve(provider: SimulatedProvider, body: JsonObject, n: number, at: number): Outcome {
    if (body.stream === true) throw badRequest('the simulator does not stream; send the request without stream: true')
    const model = String(body.model)
    const answer = (): SimulatedReply => reply({ provider, body, n })
    const outcome = (response: JsonObject, promptTokens: number, cachedTokens: number, cacheWriteTokens: number, sections: SectionTokens): Outcome => ({
      status: 200,
      response,
      promptTokens,
      cachedTokens,
      cacheWriteTokens,
      promptTokensBySection: sections,
      cachedTokensBySection: prefixBySection(cachedTokens, sections),
    })
    if (provider === 'anthropic') {
      const { usage, sections } = anthropic.serve(body, at)
      const said = answer()
      const response = anthropicMessage(model, n, said, usage, meter.countOf(replyText(said)))
      const promptTokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
      return outcome(response, promptTokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens, sections)
    }
    if (provider === 'deepseek') {
      const { usage, sections } = deepseek.serve(body, at)
      const said = answer()
      const response = chatCompletion(model, n, said, deepSeekUsage(usage, meter.countOf(replyText(said))))
      return outcome(response, usage.prompt_tokens, usage.prompt_cache_hit_tokens, 0, sections)
    }
    const result = provider === 'openai-chat' ? openai.chat(body, at) : openai.responses(body, at)
    const said = answer()
    const outputTokens = meter.countOf(replyText(said))
    const response = provider === 'openai-chat' ? chatCompletion(model, n, said, openAIChatUsage(result, outputTokens)) : openAIResponse(body, n, said, result, outputTokens)
    return outcome(response, result.promptTokens, result.cachedTokens, 0, result.sections)
  }

  return {
    requests,
    now,
    advance(ms) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new TypeError(`simulator.advance(ms) takes a finite number of milliseconds ≥ 0 (got ${String(ms)})`)
      advanced += ms
    },
    handle(path, raw) {
      const n = requests.length + 1
      const at = now()
      const provider = providerOf(path)
      let body: JsonObject = {}
      let outcome: Outcome
      try {
        const parsed: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw
        if (!isObject(parsed)) throw badRequest('the request body must be a JSON object')
        body = parsed
        if (provider === undefined) throw new ProviderError(404, `the simulator serves /v1/messages, /v1/chat/completions, /v1/responses and /deepseek/chat/completions, not ${path}`, 'not_found_error')
        outcome = serve(provider, body, n, at)
      } catch (error) {
        const failure = error instanceof ProviderError ? error : error instanceof SyntaxError ? badRequest(`the request body is not JSON: ${error.message}`) : undefined
        if (failure === undefined) throw error
        const response = errorBody(provider === 'anthropic' ? 'anthropic' : 'openai', failure.type, failure.message)
        outcome = { status: failure.status, response, promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, promptTokensBySection: NO_TOKENS, cachedTokensBySection: NO_TOKENS }
      }
      const exchange: SimulatedExchange = { n, provider, path, body, at, ...outcome }
      requests.push(exchange)
      return exchange
    },
  }
}
