import type { SimulatedProvider } from './cache-simulator.js'
import type { SimulatedReply } from './replies.js'

/** The calls the loop examples' "model" makes, one per request, before it answers in text. */
const SCRIPT: readonly SimulatedReply[] = [
  { tool: { name: 'read', input: { path: 'test/auth/login.test.ts' } } },
  { tool: { name: 'read', input: { path: 'src/auth/login.ts' } } },
  { tool: { name: 'read', input: { path: 'src/auth/session.ts' } } },
  { tool: { name: 'grep', input: { pattern: 'setCookie\\(', path: 'src' } } },
  {
    tool: {
      name: 'edit',
      input: { path: 'src/auth/login.ts', old_text: "  reply.header('x-session', session.id)", new_text: "  setCookie(reply, 'session', session.id, { maxAge: 14 * DAY })" },
    },
  },
  { tool: { name: 'bash', input: { command: 'npx vitest run test/auth/login.test.ts' } } },
]

const DONE: SimulatedReply = {
  text: 'Fixed: login stored the session id in an x-session header instead of the session cookie. It now sets the cookie through setCookie; both login tests pass.',
}

/**
 * The loop examples' model: the n-th request gets the n-th scripted tool call, then a text answer.
 * A call to a tool the request does not declare is answered in text instead (a model cannot call it).
 */
export function scriptedModel({ body, n }: { readonly provider: SimulatedProvider; readonly body: Record<string, any>; readonly n: number }): SimulatedReply {
  const reply = SCRIPT[n - 1] ?? DONE
  if ('text' in reply) return reply
  const tools: unknown[] = Array.isArray(body.tools) ? body.tools : []
  const names = tools.map((tool) => (tool as { name?: string; function?: { name?: string } }).name ?? (tool as { function?: { name?: string } }).function?.name)
  return names.includes(reply.tool.name) ? reply : { text: `I would call ${reply.tool.name}, but it is not available.` }
}
