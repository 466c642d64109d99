// Anthropic Messages prompt caching, as the documentation describes it
// ("Prompt caching", https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
//
//   tools[0] … tools[n] │ system[0] … system[m] │ messages[0].content[0] … messages[k].content[j]
//   └──────────────── one block sequence, in this order ("tools, system, then messages") ──────┘
//
// A block is a tool, a system text block, or a message content block (a string content is one text
// block). A marker nested inside a block (a `tool_result`'s own content) marks that enclosing block.

import { anthropicMinimumTokens } from './anthropic-minimums.js'
import type { SectionTokens } from './prompt-sections.js'
import { canonicalJson, chain, isObject, plainText, sha256, type JsonObject, type TokenMeter } from './prompt-units.js'
import { badRequest } from './provider-error.js'

export type AnthropicTtl = '5m' | '1h'

/** The `usage` fields the simulator answers (the response adds `output_tokens`). */
export interface AnthropicCacheUsage {
  readonly input_tokens: number
  readonly cache_read_input_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_creation: { readonly ephemeral_5m_input_tokens: number; readonly ephemeral_1h_input_tokens: number }
}

/** "By default, the cache has a 5-minute lifetime"; `ttl: '1h'` asks for an hour. */
const TTL_MS: Readonly<Record<AnthropicTtl, number>> = { '5m': 5 * 60_000, '1h': 60 * 60_000 }

/** "A maximum of 4 blocks with cache_control may be provided." */
const MAX_MARKERS = 4

/** "The system checks at most 20 positions per breakpoint, counting the breakpoint itself as the first." */
const LOOKBACK = 20

interface Marker {
  readonly path: string
  readonly ttl: AnthropicTtl
}

/** What `serve` computes for one request: the usage to answer and where the prompt's tokens lie. */
export interface AnthropicServed {
  readonly usage: AnthropicCacheUsage
  readonly sections: SectionTokens
}

interface Block {
  readonly section: keyof SectionTokens
  /** What the block is, for the prefix digest: section, role, message start, content without markers. */
  readonly digest: string
  /** What the block says, for the token count. */
  readonly text: string
  readonly markers: Marker[]
}

interface Entry {
  readonly ttl: AnthropicTtl
  expiresAt: number
}

/**
 * One organization's Anthropic prompt cache. `serve` validates a Messages request body the way the
 * API does for caching (400 `ProviderError` on a bad marker, more than 4 markers, a 1h marker after
 * a 5m one, or a system text block of whitespace only), then reads and writes the cache and returns the usage Anthropic would report.
 */
export class AnthropicCache {
  readonly #entries = new Map<string, Entry>()

  constructor(
    private readonly meter: TokenMeter,
    private readonly minimums: Readonly<Record<string, number>> = {},
  ) {}

  serve(body: JsonObject, now: number): AnthropicServed {
    if (typeof body.model !== 'string') throw badRequest('model: Field required')
    if (typeof body.max_tokens !== 'number') throw badRequest('max_tokens: Field required')
    const system = Array.isArray(body.system) ? (body.system as { text?: unknown }[]) : []
    if (system.some((block) => typeof block.text === 'string' && block.text.trim() === '')) {
      throw badRequest('system: text content blocks must contain non-whitespace text')
    }
    const blocks = blocksOf(body, this.meter)
    applyAutomaticMarker(body, blocks)
    checkMarkers(blocks)
    this.#prune(now)

    // Prefix digests and token counts through each block.
    const digests: string[] = []
    const through: number[] = []
    let digest = sha256(`anthropic\u0000${body.model}`) // caches are per model
    let tokens = 0
    const sections = { tools: 0, system: 0, messages: 0 }
    for (const block of blocks) {
      digest = chain(digest, block.digest)
      const count = this.meter.countOf(block.text)
      tokens += count
      sections[block.section] += count
      digests.push(digest)
      through.push(tokens)
    }
    const breakpoints = blocks.flatMap((block, index) => (block.markers.length > 0 ? [index] : []))
    const ttlAt = (index: number): AnthropicTtl => blocks[index]!.markers.at(-1)!.ttl

    // Reads: "Cache reads look backward for entries that prior requests wrote", each breakpoint in its
    // own 20-block window; the longest hit wins, and every entry found is refreshed ("The cache is
    // refreshed for no additional cost each time the cached content is used").
    let hit = -1
    for (const breakpoint of breakpoints) {
      for (let position = breakpoint; position > breakpoint - LOOKBACK && position >= 0; position--) {
        const entry = this.#live(digests[position]!, now)
        if (entry === undefined) continue
        entry.expiresAt = now + TTL_MS[entry.ttl]
        hit = Math.max(hit, position)
        break
      }
    }
    const read = hit < 0 ? 0 : through[hit]!

    // Writes: "Cache writes happen only at your breakpoint", one entry per breakpoint past the hit,
    // and only for a prefix of at least the model's minimum ("Shorter prompts cannot be cached").
    const minimum = anthropicMinimumTokens(body.model, this.minimums)
    const writes = breakpoints.filter((index) => index > hit && through[index]! >= minimum)
    for (const index of writes) this.#entries.set(digests[index]!, { ttl: ttlAt(index), expiresAt: now + TTL_MS[ttlAt(index)] })

    // Billing positions of "Mixing different TTLs": A = the hit, B = the last 1h breakpoint written,
    // C = the last breakpoint written. A..B is a 1h write, B..C a 5m write.
    const lastWrite = writes.at(-1)
    const lastHourWrite = writes.filter((index) => ttlAt(index) === '1h').at(-1)
    const a = read
    const b = lastHourWrite === undefined ? a : through[lastHourWrite]!
    const c = lastWrite === undefined ? a : through[lastWrite]!
    const usage: AnthropicCacheUsage = {
      input_tokens: tokens - c,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: c - a,
      cache_creation: { ephemeral_5m_input_tokens: c - b, ephemeral_1h_input_tokens: b - a },
    }
    return { usage, sections }
  }

  #live(digest: string, now: number): Entry | undefined {
    const entry = this.#entries.get(digest)
    return entry !== undefined && now < entry.expiresAt ? entry : undefined
  }

  #prune(now: number): void {
    for (const [digest, entry] of this.#entries) if (now >= entry.expiresAt) this.#entries.delete(digest)
  }
}

/**
 * A block's digest and its text to count. `where` says where it sits (section, role, message start). A
 * text block that holds only its text is known by its text's digest (a long system block is never
 * copied or serialized); any other block by its canonical JSON without markers, and counts that JSON
 * (a text block with more fields counts its text).
 */
function unitOf(meter: TokenMeter, where: string, block: JsonObject): { digest: string; text: string } {
  const plain = plainText(block)
  if (plain !== undefined) return { digest: sha256(`${where}\u0000text\u0000${meter.digestOf(plain)}`), text: plain }
  const json = canonicalJson(block, { withoutMarkers: true })
  const text = block.type === 'text' && typeof block.text === 'string' ? block.text : json
  return { digest: meter.digestOf(`${where}\u0000json\u0000${json}`), text }
}

/** The request's blocks in prefix order, each with the markers found on it or inside it. */
function blocksOf(body: JsonObject, meter: TokenMeter): Block[] {
  const blocks: Block[] = []
  const { tools = [], system = [], messages } = body
  if (!Array.isArray(tools)) throw badRequest('tools: Input should be a valid list')
  tools.forEach((tool, index) => {
    if (!isObject(tool)) throw badRequest(`tools.${index}: Input should be a valid dictionary`)
    blocks.push({ section: 'tools', ...unitOf(meter, 'tools', tool), markers: markersIn(tool, `tools.${index}`) })
  })
  const systemBlocks = typeof system === 'string' ? [{ type: 'text', text: system }] : system
  if (!Array.isArray(systemBlocks)) throw badRequest('system: Input should be a valid string or list')
  systemBlocks.forEach((block, index) => {
    if (!isObject(block)) throw badRequest(`system.${index}: Input should be a valid dictionary`)
    blocks.push({ section: 'system', ...unitOf(meter, 'system', block), markers: markersIn(block, `system.${index}`) })
  })
  if (!Array.isArray(messages)) throw badRequest('messages: Field required')
  messages.forEach((message, m) => {
    if (!isObject(message) || typeof message.role !== 'string') throw badRequest(`messages.${m}.role: Field required`)
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
    if (!Array.isArray(content)) throw badRequest(`messages.${m}.content: Input should be a valid string or list`)
    content.forEach((block, index) => {
      if (!isObject(block)) throw badRequest(`messages.${m}.content.${index}: Input should be a valid dictionary`)
      const where = `messages\u0000${JSON.stringify(message.role)}\u0000${index === 0 ? 'opens' : 'continues'}`
      blocks.push({ section: 'messages', ...unitOf(meter, where, block), markers: markersIn(block, `messages.${m}.content.${index}`) })
    })
  })
  return blocks
}

/** Every `cache_control` on `value` or nested in it, in document order, validated. */
function markersIn(value: unknown, path: string, found: Marker[] = []): Marker[] {
  if (Array.isArray(value)) value.forEach((item, index) => markersIn(item, `${path}.${index}`, found))
  if (!isObject(value)) return found
  if (value.cache_control !== undefined && value.cache_control !== null) found.push(markerOf(value.cache_control, `${path}.cache_control`))
  for (const [key, item] of Object.entries(value)) if (key !== 'cache_control') markersIn(item, `${path}.${key}`, found)
  return found
}

function markerOf(raw: unknown, path: string): Marker {
  if (!isObject(raw) || raw.type !== 'ephemeral') throw badRequest(`${path}.type: Input should be 'ephemeral'`)
  if (raw.ttl !== undefined && raw.ttl !== '5m' && raw.ttl !== '1h') throw badRequest(`${path}.ttl: Input should be '5m' or '1h'`)
  return { path, ttl: raw.ttl ?? '5m' }
}

/**
 * Automatic caching: a top-level `cache_control` marks the last block. It takes one of the 4 slots;
 * on a last block already marked with the same TTL it is a no-op, with another TTL a 400.
 */
function applyAutomaticMarker(body: JsonObject, blocks: Block[]): void {
  if (body.cache_control === undefined || body.cache_control === null) return
  const marker = markerOf(body.cache_control, 'cache_control')
  const last = blocks.at(-1)
  if (last === undefined) return
  const existing = last.markers.at(-1)
  if (existing !== undefined && existing.ttl === marker.ttl) return
  if (existing !== undefined) {
    throw badRequest(`cache_control: the automatic cache breakpoint's ttl '${marker.ttl}' differs from the ttl '${existing.ttl}' already set on the last block (${existing.path})`)
  }
  last.markers.push(marker)
}

function checkMarkers(blocks: readonly Block[]): void {
  const markers = blocks.flatMap((block) => block.markers)
  if (markers.length > MAX_MARKERS) throw badRequest(`A maximum of ${MAX_MARKERS} blocks with cache_control may be provided. Found ${markers.length}.`)
  // "Cache entries with longer TTL must appear before shorter TTLs."
  const firstShort = markers.findIndex((marker) => marker.ttl === '5m')
  const lateLong = firstShort < 0 ? undefined : markers.slice(firstShort).find((marker) => marker.ttl === '1h')
  if (lateLong !== undefined) {
    throw badRequest(
      `A ttl='1h' cache_control block (${lateLong.path}) must not come after a ttl='5m' cache_control block (${markers[firstShort]!.path}). ` +
        'Note that blocks are processed in the following order: `tools`, `system`, `messages`.',
    )
  }
}
