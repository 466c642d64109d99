/**
 * `toAnthropic` (SPEC §4.2, §4.3): the Messages API fields promptloom owns —
 * `system` as one text block per `PromptBlock`, `tools`, and the history with
 * the runtime-context snapshot — with `cache_control` breakpoints.
 *
 *   cached prefix:  tools ─┐  system blocks ─┐  messages ───────────────┐
 *                   [t1 t2*] [b1* b2* b3~]    [… user: tool_result* + snapshot]
 *                        │        │               └ history breakpoint
 *                        │        └ PromptBlock.cacheBreakpoint (the stable run)
 *                        └ tools marker
 */

import { describeValue } from '../assembly/errors.js'
import { callerTtl, checkCallerOrder, placeOwnMarkers, ttlPlanOf, walkMarkers, type CacheTtl, type CacheTtlOption, type CallerMarker, type OwnMarker } from './cache-markers.js'
import { recordHistory } from './request-history.js'
import { checkHistory, resolveRequest, trailingInstructionsStart, type RequestOptions } from './request-input.js'

export { ANTHROPIC_MAX_CACHE_MARKERS } from './cache-markers.js'

/** `{ type: 'ephemeral' }`: cache the request prefix through the block that carries it. */
export type AnthropicCacheControl = {
  /** Always `'ephemeral'`, the Messages API's only cache type. */
  type: 'ephemeral'
  /** How long the cached prefix lives: `'5m'` (Anthropic's default when absent) or `'1h'`. */
  ttl?: '5m' | '1h'
}

/** A text content block (system blocks and the snapshot). */
export type AnthropicTextBlock = {
  type: 'text'
  /** The block's text: one `PromptBlock`'s text, or the snapshot. */
  text: string
  /** Present on a breakpoint block: caches the request prefix through this block. */
  cache_control?: AnthropicCacheControl
}

/** A tool declaration of the Messages API. */
export type AnthropicTool = {
  name: string
  description: string
  /** The JSON Schema of the tool's input; always an object schema. */
  input_schema: {
    /** Always `'object'`: the Messages API takes only object schemas. */
    type: 'object'
    [key: string]: unknown
  }
  /** Present on the last tool when the tools marker is kept: caches the tool declarations. */
  cache_control?: AnthropicCacheControl
}

/** Any content block of the caller's history (the SDK's `ContentBlockParam` fits). */
export type AnthropicContentBlockLike = {
  /** The block's type (`'text'`, `'tool_use'`, `'tool_result'`, …). */
  readonly type: string
  /** The block's cache marker, if any; it counts against `ANTHROPIC_MAX_CACHE_MARKERS`, as do markers nested inside it. */
  readonly cache_control?: unknown
}

/** Any message of the caller's history (the SDK's `MessageParam` fits). */
export type AnthropicMessageLike = {
  /** Who sent the message (`'system'`: a mid-conversation system message). */
  readonly role: 'user' | 'assistant' | 'system'
  readonly content: string | readonly AnthropicContentBlockLike[]
}

/** The user message promptloom adds when the history does not end with a user turn. */
export type AnthropicSnapshotMessage = {
  role: 'user'
  /** The runtime-context snapshot as a single text block. */
  content: AnthropicTextBlock[]
}

/** Options of `toAnthropic`. */
export interface AnthropicRequestOptions<M extends AnthropicMessageLike> extends RequestOptions {
  /** The conversation so far, in the Messages API's format. Never mutated. */
  readonly messages: readonly M[]
  /**
   * Mark the last content block before the snapshot (the end of the caller's
   * history), so the conversation is cached too. Default `true`; none for an
   * empty history, or when that block already carries the caller's marker.
   */
  readonly historyBreakpoint?: boolean
  /** The TTL of promptloom's markers (SPEC §4.3); default none, Anthropic's 5 minutes. */
  readonly ttl?: CacheTtlOption
}

/** The request fields `toAnthropic` returns, ready to spread into `client.messages.create`. */
export interface AnthropicRequest<M extends AnthropicMessageLike> {
  /** One text block per `PromptBlock`, kept breakpoint blocks with `cache_control`. */
  system: AnthropicTextBlock[]
  /** The assembly's tools in order; the last carries `cache_control` when the tools marker is kept. */
  tools: AnthropicTool[]
  /** A copy of the history with the snapshot and the history breakpoint added (the caller's array and messages are untouched). */
  messages: (M | AnthropicSnapshotMessage)[]
}

const FN = 'toAnthropic'

/** Blocks that cannot carry `cache_control`: thinking blocks, and empty text. */
function markable(block: unknown): boolean {
  if (typeof block !== 'object' || block === null) return false
  const { type, text } = block as { type?: unknown; text?: unknown }
  return type !== 'thinking' && type !== 'redacted_thinking' && !(type === 'text' && text === '')
}

/** The caller's markers in prefix order, at any depth of each message's content; a tool's `input` is data, never a marker. */
function callerMarkersOf(history: readonly AnthropicMessageLike[]): CallerMarker[] {
  const markers: CallerMarker[] = []
  history.forEach((message, index) => {
    if (!Array.isArray(message.content)) return
    ;(message.content as readonly unknown[]).forEach((block, blockIndex) => {
      walkMarkers(
        block,
        (node) => (node as { cache_control?: unknown }).cache_control,
        (_node, key) => key === 'input' || key === 'cache_control',
        (marker) => markers.push({ message: index, block: blockIndex, ttl: callerTtl(marker) }),
      )
    })
  })
  return markers
}

/** Where the history breakpoint goes: the last markable block of `history[0…end)`, as message and block index (-1: string content). */
function historyTarget(history: readonly AnthropicMessageLike[], end: number): { message: number; block: number } | undefined {
  for (let i = end - 1; i >= 0; i--) {
    const { content } = history[i]!
    if (typeof content === 'string') {
      if (content !== '') return { message: i, block: -1 }
      continue
    }
    for (let j = content.length - 1; j >= 0; j--) if (markable(content[j])) return { message: i, block: j }
  }
  return undefined
}

function control(ttl: CacheTtl | undefined): AnthropicCacheControl {
  return ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl }
}

/** A copy of `message` with the marker on block `block` (string content becomes one text block) and `extra` blocks appended. */
function withBlocks<M extends AnthropicMessageLike>(message: M, block: number | undefined, marker: AnthropicCacheControl | undefined, extra: readonly AnthropicTextBlock[]): M {
  const blocks: unknown[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content]
  if (marker !== undefined && block !== undefined) {
    const at = block === -1 ? 0 : block
    blocks[at] = { ...(blocks[at] as object), cache_control: marker }
  }
  blocks.push(...extra)
  return { ...message, content: blocks } as M
}

/**
 * Builds the Messages API request fields for one step. Markers (SPEC §4.3):
 * the caller's (counted at any depth) stay as they are; promptloom's take what
 * is left of `ANTHROPIC_MAX_CACHE_MARKERS` in priority order — the history
 * breakpoint, the system breakpoints latest first, the last tool's (only when
 * a system block is a breakpoint) — each with the TTL the order rule gives.
 * The snapshot is a text block at the end of the last user turn (after its
 * `tool_result` blocks), else a new user message; a history that ends with
 * mid-conversation system messages gets it before them (Anthropic requires
 * such a message to come last or before an assistant turn). Throws a
 * `TypeError` for bad options, naming the tool or the history index at fault,
 * and for caller markers whose TTLs are out of order.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk'
 * import { historyOf, toAnthropic, usageFromAnthropic } from 'promptloom'
 *
 * const client = new Anthropic()
 * let history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Which test fails?' }]
 * const result = surface.step({ assembly })
 * const snapshot = result.events.find((event) => event.type === 'context/snapshot')?.text ?? false
 * const request = toAnthropic({ assembly, rendered: result.rendered, messages: history, snapshot })
 * const reply = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, ...request })
 * history = [...historyOf(request), { role: 'assistant', content: reply.content }] // as sent, without the cache markers
 * surface.observeUsage(usageFromAnthropic(reply.usage))
 * ```
 */
export function toAnthropic<M extends AnthropicMessageLike>(options: AnthropicRequestOptions<M>): AnthropicRequest<M> {
  const { rendered, tools, snapshot } = resolveRequest(FN, options, options?.messages, 'messages')
  const history = options.messages
  checkHistory(FN, 'messages', history, 'required')
  const { historyBreakpoint = true } = options
  if (typeof historyBreakpoint !== 'boolean') throw new TypeError(`${FN} option "historyBreakpoint" must be a boolean (got ${describeValue(historyBreakpoint)})`)
  const ttl = ttlPlanOf(FN, options.ttl)
  const callers = callerMarkersOf(history)
  checkCallerOrder(FN, 'messages', callers)

  // The snapshot goes before any trailing mid-conversation system messages; the history breakpoint right before it.
  const split = snapshot === '' ? history.length : trailingInstructionsStart(history, ['system'])
  const target = historyBreakpoint ? historyTarget(history, split) : undefined
  // A block the caller marked already caches the history through it.
  const targetMarked = target !== undefined && target.block !== -1 && (history[target.message]!.content as readonly AnthropicContentBlockLike[])[target.block]!.cache_control != null
  const { blocks } = rendered
  const own = placeOwnMarkers({
    blocks,
    tools: tools.length > 0,
    history: target !== undefined && !targetMarked,
    callers,
    beforeHistory: (marker) => target !== undefined && (marker.message < target.message || (marker.message === target.message && marker.block <= target.block)),
    ttl,
  })
  const markerFor = (place: OwnMarker): AnthropicCacheControl | undefined => (own.has(place) ? control(own.get(place)) : undefined)

  const system = blocks.map((block, index): AnthropicTextBlock => {
    const marker = markerFor(index)
    return marker === undefined ? { type: 'text', text: block.text } : { type: 'text', text: block.text, cache_control: marker }
  })
  const toolsMarker = markerFor('tools')
  const out = tools.map((tool, index): AnthropicTool => {
    const declared: AnthropicTool = { name: tool.name, description: tool.description, input_schema: inputSchemaOf(tool.name, tool.parameters) }
    return toolsMarker !== undefined && index === tools.length - 1 ? { ...declared, cache_control: toolsMarker } : declared
  })

  const historyMarker = markerFor('history')
  const marked = historyMarker === undefined ? undefined : target
  const request: AnthropicRequest<M> = { system, tools: out, messages: placed(history, split, snapshot, marked, historyMarker) }
  // The history to keep is what was sent (a marked string content stays one text block), without the marker.
  recordHistory(request, placed(history, split, snapshot, marked, undefined), history.slice())
  return request
}

/**
 * `history` with the snapshot placed at `split` (into the user turn before
 * it, else as a new user message there) and `marker` (none: `undefined`) on
 * block `marked` (whose string content becomes one text block either way).
 */
function placed<M extends AnthropicMessageLike>(
  history: readonly M[],
  split: number,
  snapshot: string,
  marked: { message: number; block: number } | undefined,
  marker: AnthropicCacheControl | undefined,
): (M | AnthropicSnapshotMessage)[] {
  const messages: (M | AnthropicSnapshotMessage)[] = history.slice()
  if (snapshot === '') {
    if (marked !== undefined) messages[marked.message] = withBlocks(history[marked.message]!, marked.block, marker, [])
    return messages
  }
  const block: AnthropicTextBlock = { type: 'text', text: snapshot }
  const last = history[split - 1]
  if (last !== undefined && last.role === 'user') {
    if (marked !== undefined && marked.message !== split - 1) messages[marked.message] = withBlocks(history[marked.message]!, marked.block, marker, [])
    messages[split - 1] = withBlocks(last, marked?.message === split - 1 ? marked.block : undefined, marker, [block])
    return messages
  }
  if (marked !== undefined) messages[marked.message] = withBlocks(history[marked.message]!, marked.block, marker, [])
  messages.splice(split, 0, { role: 'user', content: [block] })
  return messages
}

/** The Messages API requires an object schema: `type: 'object'` is added when missing; another type is an error. */
function inputSchemaOf(name: string, parameters: Readonly<Record<string, unknown>>): AnthropicTool['input_schema'] {
  if (parameters.type === 'object') return parameters as AnthropicTool['input_schema']
  if (parameters.type === undefined) return { ...parameters, type: 'object' }
  throw new TypeError(
    `toAnthropic option "assembly" has tool "${name}" whose parameters have type ${describeValue(parameters.type)}; the Messages API takes an object schema ({ type: 'object', properties })`,
  )
}
