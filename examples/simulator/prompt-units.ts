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

/** JSON.stringify's replacer for canonical JSON: an object whose keys are out of order is replaced by a sorted copy. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (!isObject(value)) return value
  const keys = Object.keys(value)
  let sorted = true
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!
  if (sorted) return value
  const copy: JsonObject = {}
  for (const key of keys.sort()) copy[key] = value[key]
  return copy
}

/** The same, leaving out every `cache_control` key: a marker is not part of the cached content. */
function sortedKeysWithoutMarkers(key: string, value: unknown): unknown {
  return key === 'cache_control' ? undefined : sortedKeys(key, value)
}

/**
 * JSON with object keys sorted at every depth, so equal values serialize equally whatever their key
 * order; `withoutMarkers` leaves out `cache_control` keys at any depth.
 */
export function canonicalJson(value: unknown, { withoutMarkers = false }: { readonly withoutMarkers?: boolean } = {}): string {
  return JSON.stringify(value, withoutMarkers ? sortedKeysWithoutMarkers : sortedKeys) ?? 'null'
}

/** The text of a text block that holds nothing else (besides a marker), else `undefined`. */
export function plainText(block: JsonObject): string | undefined {
  if (block.type !== 'text' || typeof block.text !== 'string') return undefined
  for (const key in block) if (key !== 'type' && key !== 'text' && key !== 'cache_control') return undefined
  return block.text
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
