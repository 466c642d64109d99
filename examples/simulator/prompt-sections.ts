// Where a request's tokens lie: every provider caches the prompt in the order tools → system →
// messages, so a cached prefix of n tokens covers the tools first, then the system prompt, then the
// conversation. The simulator reports both the prompt and the cached prefix split this way.

/** Tokens per part of the prompt, in prefix order. */
export interface SectionTokens {
  /** The tool declarations. */
  readonly tools: number
  /** Anthropic's `system`; OpenAI's leading system/developer messages or `instructions`. */
  readonly system: number
  /** Everything after: the conversation. */
  readonly messages: number
}

export const NO_TOKENS: SectionTokens = Object.freeze({ tools: 0, system: 0, messages: 0 })

/** The part of each section that lies in the first `prefix` tokens of a prompt split as `totals`. */
export function prefixBySection(prefix: number, totals: SectionTokens): SectionTokens {
  const tools = Math.min(prefix, totals.tools)
  const system = Math.min(prefix - tools, totals.system)
  return { tools, system, messages: Math.min(prefix - tools - system, totals.messages) }
}
