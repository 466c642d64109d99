import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createCacheSimulator, type CacheSimulator, type SimulatorOptions } from './cache-simulator.js'

/** The simulator on 127.0.0.1: point an official SDK client at `baseURL(provider)`. */
export interface Simulator extends CacheSimulator {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  /**
   * The base URL for an SDK client: `anthropic` (for `@anthropic-ai/sdk`; `@ai-sdk/anthropic` takes
   * `baseURL('openai')`, which ends in /v1), `openai` (`openai`, Chat Completions and Responses), or
   * `deepseek` (`openai` pointed at DeepSeek).
   */
  baseURL(provider: 'anthropic' | 'openai' | 'deepseek'): string
  /** Stops the server; the recorded requests stay readable. */
  close(): Promise<void>
}

/** Starts a simulator with fresh caches on 127.0.0.1, on a free port. No network beyond the loopback. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const simulator = createCacheSimulator(options)
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (raw += chunk))
    req.on('end', () => {
      try {
        const { status, response } = simulator.handle(req.url ?? '/', raw)
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(response))
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { type: 'api_error', message: `the simulator failed: ${error instanceof Error ? error.message : String(error)}` } }))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    requests: simulator.requests,
    now: simulator.now,
    advance: simulator.advance,
    handle: simulator.handle,
    url,
    baseURL: (provider) => (provider === 'anthropic' ? url : provider === 'openai' ? `${url}/v1` : `${url}/deepseek`),
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  }
}
