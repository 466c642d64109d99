/**
 * The system messages a replayed step holds. Each step keeps the version it
 * saw in O(1) (a shared immutable list), and builds the `systemMessages`
 * array only when it is first read: copying every live message into every
 * step makes replaying a long in-history log quadratic.
 */

/**
 * The in-history system messages (node > 0) as an immutable list, highest
 * node first: an append at a higher node, the common case, shares the whole
 * list below it.
 */
export interface HistoryMessage {
  readonly node: number
  readonly text: string
  readonly below: HistoryMessage | undefined
}

/** The list with `text` at `node`: the messages below it are shared, only those above it copied. */
export function withMessage(top: HistoryMessage | undefined, node: number, text: string): HistoryMessage {
  if (top === undefined || node > top.node) return { node, text, below: top }
  if (node === top.node) return { node, text, below: top.below }
  // A write below the newest node copies only the messages above it.
  const above: HistoryMessage[] = []
  let rest: HistoryMessage | undefined = top
  while (rest !== undefined && rest.node > node) {
    above.push(rest)
    rest = rest.below
  }
  let out: HistoryMessage = { node, text, below: rest !== undefined && rest.node === node ? rest.below : rest }
  for (let i = above.length - 1; i >= 0; i--) out = { node: above[i]!.node, text: above[i]!.text, below: out }
  return out
}

function liveMessages(node0: string | undefined, history: HistoryMessage | undefined): { node: number; text: string }[] {
  const out: { node: number; text: string }[] = []
  for (let message = history; message !== undefined; message = message.below) out.push({ node: message.node, text: message.text })
  if (node0 !== undefined) out.push({ node: 0, text: node0 })
  return out.reverse()
}

/** Where a replayed step keeps the system messages it saw, until `systemMessages` is first read. */
const HELD = Symbol('system messages held')

/** The system messages one replayed step holds: node 0's text and the in-history list. */
export interface Held {
  readonly node0: string | undefined
  readonly history: HistoryMessage | undefined
}

/**
 * `systemMessages` of every replayed step: built on first read (see the
 * module header).
 */
const LIVE_MESSAGES: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { readonly [HELD]: Held }) {
    const value = liveMessages(this[HELD].node0, this[HELD].history)
    // A frozen or sealed step keeps the getter: its properties can no longer be redefined.
    if (Object.getOwnPropertyDescriptor(this, 'systemMessages')?.configurable === true) {
      Object.defineProperty(this, 'systemMessages', { value, enumerable: true })
    }
    return value
  },
}

/** Gives `step` its held messages and the `systemMessages` getter. */
export function holdMessages(step: object, held: Held): void {
  Object.defineProperty(step, HELD, { value: held })
  Object.defineProperty(step, 'systemMessages', LIVE_MESSAGES)
}
