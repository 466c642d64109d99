// The simulator's token meter and the canonical text of each prompt unit.
//
// Tokens: gpt-tokenizer's o200k_base BPE, applied to each unit on its own (a
// tool, a system block, a content block, a chat message), never to the
// concatenated prompt. A unit's tokens therefore do not depend on what follows
// it, and a prefix's token count is exactly the sum of its units' counts. The
// counts approximate a provider's (each provider has its own tokenizer and adds
// a few tokens of framing per message); the caching arithmetic on top of them
// is exact.

import { createHash } from 'node:crypto'
import { encode } from 'gpt-tokenizer'

/** A JSON object as parsed from a request body. */
export type JsonObject = Record<string, unknown>

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON with object keys sorted at every depth, so equal values serialize equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** A copy of `value` without any `cache_control` key at any depth: a marker is not part of the cached content. */
export function withoutMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMarkers)
  if (!isObject(value)) return value
  return Object.fromEntries(Object.entries(value).flatMap(([key, item]) => (key === 'cache_control' ? [] : [[key, withoutMarkers(item)]])))
}

/** The text a text-like content part carries, else its canonical JSON. */
export function partText(part: unknown): string {
  if (typeof part === 'string') return part
  if (isObject(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text')) return part.text
  return canonicalJson(part)
}

/**
 * The canonical text of an OpenAI-style message (chat message or Responses input message):
 * a role line, the content's text parts one per line, then any other field as canonical JSON.
 */
export function messageText(message: JsonObject): string {
  const { role, content, ...rest } = message
  const lines = [`<${String(role)}>`]
  if (typeof content === 'string') lines.push(content)
  else if (Array.isArray(content)) lines.push(...content.map(partText))
  else if (content !== undefined && content !== null) lines.push(canonicalJson(content))
  if (Object.keys(rest).length > 0) lines.push(canonicalJson(rest))
  return lines.join('\n')
}

/**
 * Memoized tokenization and digests, one per simulator: a unit seen before costs a map lookup.
 * The memo grows with the distinct units a simulator has seen and is dropped with it.
 */
export class TokenMeter {
  readonly #tokens = new Map<string, readonly number[]>()
  readonly #digests = new Map<string, string>()

  /** The unit's tokens (o200k_base); the returned array is shared, do not mutate it. */
  tokensOf(text: string): readonly number[] {
    let tokens = this.#tokens.get(text)
    if (tokens === undefined) {
      tokens = encode(text)
      this.#tokens.set(text, tokens)
    }
    return tokens
  }

  countOf(text: string): number {
    return this.tokensOf(text).length
  }

  /** A SHA-256 hex digest of `text`. */
  digestOf(text: string): string {
    let digest = this.#digests.get(text)
    if (digest === undefined) {
      digest = sha256(text)
      this.#digests.set(text, digest)
    }
    return digest
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The digest of a prefix extended by one unit: chained, so equal digests mean equal prefixes. */
export function chain(previous: string, unitDigest: string): string {
  return sha256(`${previous}\u0000${unitDigest}`)
}
