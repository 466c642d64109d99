// OpenAI automatic prompt caching, as the documentation describes it
// ("Prompt caching", https://developers.openai.com/api/docs/guides/prompt-caching; the 128-token
// increments: the "Prompt Caching 201" cookbook,
// https://github.com/openai/openai-cookbook/blob/main/examples/Prompt_Caching_201.ipynb).
//
// The prompt is one token sequence: the tools, then (Chat Completions) each message, or (Responses)
// the instructions and each input item; each unit tokenized on its own (prompt-units.ts).
//
//   route = hash(model, first 256 tokens, prompt_cache_key)  ─┐
//   machine = route + overflow index (more than 15 requests    ├─ each machine keeps the prefixes of
//             on the route in the last minute spill over)     ─┘  the prompts it processed
//   cached = longest stored prefix, in whole 128-token steps, 0 below 1024 tokens

import type { SectionTokens } from './prompt-sections.js'
import { concatTokens, PrefixStore } from './prefix-store.js'
import { canonicalJson, isObject, messageText, sha256, type JsonObject, type TokenMeter } from './prompt-units.js'
import { badRequest } from './provider-error.js'

/** "Caching is enabled automatically for prompts that are 1024 tokens or longer." */
export const OPENAI_MINIMUM_TOKENS = 1024

/** "cache hits occurring in increments of 128 tokens" (1024, 1152, 1280, …). */
export const OPENAI_GRANULARITY = 128

/** "The hash typically uses the first 256 tokens." */
const ROUTING_PREFIX_TOKENS = 256

/** In-memory retention: "cached prefixes generally remain active for 5 to 10 minutes of inactivity"; modelled as the low end. */
const IN_MEMORY_RETENTION_MS = 5 * 60_000

/** `prompt_cache_retention: '24h'`: "keeps cached prefixes active for longer, up to a maximum of 24 hours". */
const EXTENDED_RETENTION_MS = 24 * 60 * 60_000

/** "If requests for the same prefix and prompt_cache_key combination exceed … approximately 15 requests per minute, some may overflow." */
export const OPENAI_OVERFLOW_PER_MINUTE = 15

export interface OpenAICacheResult {
  readonly promptTokens: number
  readonly cachedTokens: number
  /** Where the prompt's tokens lie: tools, the leading system/developer messages (or instructions), the rest. */
  readonly sections: SectionTokens
}

/** A request's prompt units in order, and how many of them are tools and how many system messages after those. */
export interface ChatUnits {
  readonly units: readonly string[]
  readonly tools: number
  readonly system: number
}

export interface OpenAICacheOptions {
  /** Requests per route per minute before the overflow spills to another machine; `Infinity` turns overflow off. */
  readonly overflowPerMinute?: number
}

/**
 * One organization's OpenAI prompt cache across machines. `chat` and `responses` compute a request's
 * prompt tokens and cached tokens, then store its prefixes on the machine it was routed to.
 */
export class OpenAICache {
  readonly #machines = new Map<string, PrefixStore>()
  /** route → times of its requests in the last minute, for the overflow */
  readonly #recent = new Map<string, number[]>()
  readonly #overflowPerMinute: number

  constructor(
    private readonly meter: TokenMeter,
    options: OpenAICacheOptions = {},
  ) {
    this.#overflowPerMinute = options.overflowPerMinute ?? OPENAI_OVERFLOW_PER_MINUTE
    if (!(this.#overflowPerMinute >= 1)) throw new TypeError(`simulator option "overflowPerMinute" must be at least 1 (got ${this.#overflowPerMinute})`)
  }

  /** A Chat Completions body: tools, then messages. */
  chat(body: JsonObject, now: number): OpenAICacheResult {
    if (typeof body.model !== 'string') throw badRequest('you must provide a model parameter')
    return this.#serve(body, chatUnits(body), now)
  }

  /** A Responses body: tools, then instructions, then the input (a string is one user message). */
  responses(body: JsonObject, now: number): OpenAICacheResult {
    if (typeof body.model !== 'string') throw badRequest('you must provide a model parameter')
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input
    if (!Array.isArray(input)) throw badRequest("'input' must be a string or an array")
    const instructions = typeof body.instructions === 'string' ? [`<instructions>\n${body.instructions}`] : []
    const items = input.map((item, index) =>
      isObject(item) && (item.type === undefined || item.type === 'message') ? messageUnit(item, `input[${index}]`) : canonicalJson(item),
    )
    const tools = toolUnits(body)
    return this.#serve(body, { units: [...tools, ...instructions, ...items], tools: tools.length, system: instructions.length }, now)
  }

  #serve(body: JsonObject, prompt: ChatUnits, now: number): OpenAICacheResult {
    const units = prompt.units.map((unit) => this.meter.tokensOf(unit))
    const tokens = concatTokens(units)
    const key = typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : ''
    const route = sha256(`${String(body.model)}\u0000${key}\u0000${tokens.subarray(0, ROUTING_PREFIX_TOKENS).join(',')}`)
    const machine = this.#machineFor(route, now)
    const steps = machine.stepsOf(String(body.model), tokens)
    const cached = machine.longest(steps, now)
    // "the system processes your full prompt, caching the prefix afterward on that machine"
    if (tokens.length >= OPENAI_MINIMUM_TOKENS) machine.store(steps, now + (body.prompt_cache_retention === '24h' ? EXTENDED_RETENTION_MS : IN_MEMORY_RETENTION_MS))
    return { promptTokens: tokens.length, cachedTokens: cached >= OPENAI_MINIMUM_TOKENS ? cached : 0, sections: sectionsOf(prompt, units) }
  }

  /** The machine a request on `route` lands on: the first, or an overflow one past the per-minute rate. */
  #machineFor(route: string, now: number): PrefixStore {
    const recent = (this.#recent.get(route) ?? []).filter((time) => time > now - 60_000)
    recent.push(now)
    this.#recent.set(route, recent)
    const id = `${route}#${Math.floor((recent.length - 1) / this.#overflowPerMinute)}`
    let machine = this.#machines.get(id)
    if (machine === undefined) {
      machine = new PrefixStore(OPENAI_GRANULARITY)
      this.#machines.set(id, machine)
    }
    return machine
  }
}

/** The units of an OpenAI-compatible Chat Completions body: each tool, then each message. */
export function chatUnits(body: JsonObject): ChatUnits {
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw badRequest("'messages' must be a non-empty array")
  const tools = toolUnits(body)
  const messages = body.messages.map((message, index) => messageUnit(message, `messages[${index}]`))
  const system = body.messages.findIndex((message) => !isObject(message) || (message.role !== 'system' && message.role !== 'developer'))
  return { units: [...tools, ...messages], tools: tools.length, system: system < 0 ? messages.length : system }
}

/** The prompt's tokens per section, from each unit's tokens. */
export function sectionsOf(prompt: ChatUnits, units: readonly (readonly number[])[]): SectionTokens {
  const sum = (from: number, to: number): number => units.slice(from, to).reduce((total, unit) => total + unit.length, 0)
  const systemEnd = prompt.tools + prompt.system
  return { tools: sum(0, prompt.tools), system: sum(prompt.tools, systemEnd), messages: sum(systemEnd, units.length) }
}

function toolUnits(body: JsonObject): string[] {
  if (body.tools === undefined || body.tools === null) return []
  if (!Array.isArray(body.tools)) throw badRequest("'tools' must be an array")
  return body.tools.map((tool) => canonicalJson(tool))
}

function messageUnit(message: unknown, path: string): string {
  if (!isObject(message) || typeof message.role !== 'string') throw badRequest(`Missing required parameter: '${path}.role'`)
  return messageText(message)
}
