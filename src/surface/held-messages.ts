/**
 * What the model holds at one point of a replayed session, as immutable
 * values: a step keeps the value it saw, so replay never copies what steps share.
 */

import type { ToolSchema } from '../assembly/types.js'

/**
 * The in-history system messages (node > 0), highest node first, never changed:
 * each step keeps the list it saw, and an append above the top node shares it whole.
 */
export interface HistoryMessage {
  readonly node: number
  readonly text: string
  readonly below: HistoryMessage | undefined
}

/** The list with `text` at `node`: the messages below it are shared, only those above it copied. */
export function withMessage(top: HistoryMessage | undefined, node: number, text: string): HistoryMessage {
  const above: HistoryMessage[] = []
  let rest = top
  while (rest !== undefined && rest.node > node) {
    above.push(rest)
    rest = rest.below
  }
  let out: HistoryMessage = { node, text, below: rest?.node === node ? rest.below : rest }
  for (const message of above.reverse()) out = { node: message.node, text: message.text, below: out }
  return out
}

/** Every live system message, by ascending node. */
export function liveMessages(node0: string | undefined, history: HistoryMessage | undefined): { node: number; text: string }[] {
  const out: { node: number; text: string }[] = []
  for (let message = history; message !== undefined; message = message.below) out.push({ node: message.node, text: message.text })
  if (node0 !== undefined) out.push({ node: 0, text: node0 })
  return out.reverse()
}

/** What the model holds at one point of a session; replaced, never changed. */
export interface Held {
  readonly node0: string | undefined
  readonly history: HistoryMessage | undefined
  readonly prompt: string
  readonly tools: readonly ToolSchema[]
  readonly config: Readonly<Record<string, unknown>>
  readonly contextSnapshot: string
}

export const NOTHING_HELD: Held = Object.freeze({
  node0: undefined,
  history: undefined,
  prompt: '',
  tools: Object.freeze([]),
  config: Object.freeze({}),
  contextSnapshot: '',
})
