import type { SimulatedProvider } from './cache-simulator.js'
import type { SimulatedReply } from './replies.js'

/** The examples' model: read a file, read another, grep (once the tool exists), then answer in text. */
export function scriptedModel({ body, n }: { readonly provider: SimulatedProvider; readonly body: Record<string, any>; readonly n: number }): SimulatedReply {
  const tools: unknown[] = Array.isArray(body.tools) ? body.tools : []
  const names = tools.map((tool) => (tool as { name?: string; function?: { name?: string } }).name ?? (tool as { function?: { name?: string } }).function?.name)
  if (n <= 2) return { tool: { name: 'read', input: { path: n === 1 ? 'test/login.test.ts' : 'src/login.ts' } } }
  if (n === 3 && names.includes('grep')) return { tool: { name: 'grep', input: { pattern: 'session' } } }
  return { text: 'Fixed: the session cookie was not set.' }
}
