// A stand-in model API on 127.0.0.1 for the examples and the provider tests:
// it records each JSON request body and answers a valid canned Anthropic
// Messages, OpenAI Chat Completions or OpenAI Responses reply. No network.
//
// A canned server cannot know what a real provider would cache, so it reports
// cached tokens by one simple rule: the longest common token prefix
// (gpt-tokenizer) of this request's prompt with the previous request's, the
// prompt being tools, then system/instructions, then messages/input, one JSON
// line each (the order providers cache in). It ignores Anthropic's
// breakpoints and minimum cacheable length.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encode } from 'gpt-tokenizer'

/** What the model "says": plain text, or one tool call. */
export type CannedReply = { text: string } | { tool: { name: string; input: Record<string, unknown> } }

/** One recorded request. */
export interface CapturedRequest {
  readonly path: string
  // The parsed JSON body as the SDK sent it.
  readonly body: Record<string, any>
  /** Prompt tokens by the server's rule, and how many of them it reported as cached. */
  readonly promptTokens: number
  readonly cachedTokens: number
}

export interface CaptureServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  readonly requests: CapturedRequest[]
  close(): Promise<void>
}

/** The prompt in cache order (tools → system → messages), one JSON line per item. */
function promptLines(body: Record<string, any>): string {
  const system = body.system ?? body.instructions ?? []
  const messages = body.messages ?? body.input ?? []
  // Markers say where to cache, not what: they are left out, as a provider's cache key leaves them out.
  const withoutMarkers = (key: string, value: unknown) => (key === 'cache_control' ? undefined : value)
  return [...(body.tools ?? []), ...(Array.isArray(system) ? system : [system]), ...messages].map((item) => JSON.stringify(item, withoutMarkers)).join('\n')
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** The examples' model: read a file, read another, grep (once the tool exists), then answer in text. */
export function scriptedModel(request: CapturedRequest, n: number): CannedReply {
  const tools: string[] = (request.body.tools ?? []).map((tool: any) => tool.name ?? tool.function?.name)
  if (n <= 2) return { tool: { name: 'read', input: { path: n === 1 ? 'test/login.test.ts' : 'src/login.ts' } } }
  if (n === 3 && tools.includes('grep')) return { tool: { name: 'grep', input: { pattern: 'session' } } }
  return { text: 'Fixed: the session cookie was not set.' }
}

/** A copy of a JSON body with every string longer than 60 characters cut, for printing. */
export function trimmed<T>(value: T): T {
  if (typeof value === 'string') return (value.length > 60 ? `${value.slice(0, 57)}...` : value) as T
  if (Array.isArray(value)) return value.map(trimmed) as T
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, trimmed(item)])) as T
  return value
}

/** Prints a request body under a `===== title =====` header: each system block, tool and message on one line. */
export function printBody(title: string, body: Record<string, unknown>): void {
  const lines = [`===== ${title} =====`]
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) lines.push(`${key}: ${JSON.stringify(value)}`)
    else lines.push(`${key}: [`, ...value.map((item) => `  ${JSON.stringify(item)}`), ']')
  }
  console.log(lines.join('\n'))
}

/** Starts the server on 127.0.0.1 (a free port); `reply` scripts the answers (default: text "ok"). */
export async function startCaptureServer(
  reply: (request: CapturedRequest, n: number) => CannedReply = () => ({ text: 'ok' }),
): Promise<CaptureServer> {
  const requests: CapturedRequest[] = []
  let previous: number[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (raw += chunk))
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, any>
      const tokens = encode(promptLines(body))
      const cachedTokens = commonPrefix(tokens, previous)
      previous = tokens
      const request: CapturedRequest = { path: req.url ?? '', body, promptTokens: tokens.length, cachedTokens }
      requests.push(request)
      const answer = cannedResponse(request, reply(request, requests.length), requests.length)
      res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer ?? { error: { type: 'not_found', message: `no canned reply for ${req.url}` } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  }
}

function cannedResponse(request: CapturedRequest, reply: CannedReply, n: number): object | undefined {
  const { path, body, promptTokens, cachedTokens } = request
  const model = String(body.model)
  if (path.endsWith('/messages')) {
    return {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      model,
      content: 'text' in reply ? [{ type: 'text', text: reply.text }] : [{ type: 'tool_use', id: `toolu_${n}`, name: reply.tool.name, input: reply.tool.input }],
      stop_reason: 'text' in reply ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: promptTokens - cachedTokens, cache_read_input_tokens: cachedTokens, cache_creation_input_tokens: 0, output_tokens: 5 },
    }
  }
  if (path.endsWith('/chat/completions')) {
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
      created: 1_700_000_000 + n,
      model,
      choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls', logprobs: null }],
      usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5, prompt_tokens_details: { cached_tokens: cachedTokens } },
    }
  }
  if (path.endsWith('/responses')) {
    const output =
      'text' in reply
        ? [{ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: reply.text, annotations: [] }] }]
        : [{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: reply.tool.name, arguments: JSON.stringify(reply.tool.input), status: 'completed' }]
    return {
      id: `resp_${n}`,
      object: 'response',
      created_at: 1_700_000_000 + n,
      status: 'completed',
      model,
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: body.tools ?? [],
      usage: {
        input_tokens: promptTokens,
        input_tokens_details: { cached_tokens: cachedTokens },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: promptTokens + 5,
      },
    }
  }
  return undefined
}
