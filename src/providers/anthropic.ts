/**
 * `toAnthropic` (SPEC §4.2): the Messages API fields promptloom owns —
 * `system` as one text block per `PromptBlock`, `tools`, and the history with
 * the runtime-context snapshot — with `cache_control` breakpoints.
 *
 *   cached prefix:  tools ─┐  system blocks ─┐  messages
 *                   [t1 t2*] [b1 b2* b3 b4*]   [… user: tool_result… + snapshot]
 *                        └ tools marker    └ PromptBlock.cacheBreakpoint
 */

import { describe, resolveRequest, type RequestOptions } from './request-input.js'

/** Anthropic's limit on `cache_control` markers in one request (tools, system and messages together). */
export const ANTHROPIC_MAX_CACHE_MARKERS = 4

/** `{ type: 'ephemeral' }`: cache the request prefix through the block that carries it. */
export type AnthropicCacheControl = {
  /** Always `'ephemeral'`, the Messages API's only cache type. */
  type: 'ephemeral'
  /** How long the cached prefix lives: `'5m'` (Anthropic's default when absent) or `'1h'`. */
  ttl?: '5m' | '1h'
}

/** A text content block (system blocks and the snapshot). */
export type AnthropicTextBlock = {
  /** Always `'text'`. */
  type: 'text'
  /** The block's text: one `PromptBlock`'s text, or the snapshot. */
  text: string
  /** Present on a breakpoint block: caches the request prefix through this block. */
  cache_control?: AnthropicCacheControl
}

/** A tool declaration of the Messages API. */
export type AnthropicTool = {
  /** The tool's name, as the model calls it. */
  name: string
  /** What the tool does, for the model. */
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
  /** The block's cache marker, if any; it counts against `ANTHROPIC_MAX_CACHE_MARKERS`. */
  readonly cache_control?: unknown
}

/** Any message of the caller's history (the SDK's `MessageParam` fits). */
export type AnthropicMessageLike = {
  /** Who sent the message. */
  readonly role: 'user' | 'assistant' | 'system'
  /** The message's text, or its content blocks. */
  readonly content: string | readonly AnthropicContentBlockLike[]
}

/** The user message promptloom adds when the history does not end with a user turn. */
export type AnthropicSnapshotMessage = {
  /** Always `'user'`. */
  role: 'user'
  /** The runtime-context snapshot as a single text block. */
  content: AnthropicTextBlock[]
}

/** Options of `toAnthropic`. */
export interface AnthropicRequestOptions<M extends AnthropicMessageLike> extends RequestOptions {
  /** The conversation so far, in the Messages API's format. Never mutated. */
  readonly messages: readonly M[]
}

/** The request fields `toAnthropic` returns, ready to spread into `client.messages.create`. */
export interface AnthropicRequest<M extends AnthropicMessageLike> {
  /** One text block per `PromptBlock`, breakpoint blocks with `cache_control`. */
  system: AnthropicTextBlock[]
  /** The assembly's tools in order; the last carries `cache_control` when a system block does. */
  tools: AnthropicTool[]
  /** A copy of the history with the snapshot added (the caller's array and messages are untouched). */
  messages: (M | AnthropicSnapshotMessage)[]
}

const EPHEMERAL: AnthropicCacheControl = Object.freeze({ type: 'ephemeral' }) as AnthropicCacheControl

/**
 * Builds the Messages API request fields for one step. Markers: one per
 * breakpoint block, plus the last tool's when any system block has one; at
 * most `ANTHROPIC_MAX_CACHE_MARKERS` in all, counting the markers already in
 * `messages`, keeping the latest (system breakpoints from the last one back,
 * the tools marker first to go). The snapshot becomes a text block at the end
 * of the last message when that is a user turn (after its `tool_result`
 * blocks), else a new user message. Throws a `TypeError` for bad options.
 */
export function toAnthropic<M extends AnthropicMessageLike>(options: AnthropicRequestOptions<M>): AnthropicRequest<M> {
  const { rendered, tools, snapshot } = resolveRequest('toAnthropic', options, options?.messages, 'messages')
  const history = options.messages
  const budget = Math.max(0, ANTHROPIC_MAX_CACHE_MARKERS - markersIn(history))

  // Candidates in prefix order (tools, then system blocks); the latest `budget` are kept.
  const candidates: ('tools' | number)[] = []
  rendered.blocks.forEach((block, index) => block.cacheBreakpoint && candidates.push(index))
  if (candidates.length > 0 && tools.length > 0) candidates.unshift('tools')
  const kept = new Set(budget === 0 ? [] : candidates.slice(-budget))

  const system = rendered.blocks.map((block, index): AnthropicTextBlock =>
    kept.has(index) ? { type: 'text', text: block.text, cache_control: EPHEMERAL } : { type: 'text', text: block.text },
  )
  const out: AnthropicTool[] = tools.map((tool, index) => {
    const declared: AnthropicTool = { name: tool.name, description: tool.description, input_schema: inputSchemaOf(tool.name, tool.parameters) }
    return index === tools.length - 1 && kept.has('tools') ? { ...declared, cache_control: EPHEMERAL } : declared
  })
  return { system, tools: out, messages: withSnapshot(history, snapshot) }
}

function withSnapshot<M extends AnthropicMessageLike>(history: readonly M[], snapshot: string): (M | AnthropicSnapshotMessage)[] {
  const messages: (M | AnthropicSnapshotMessage)[] = history.slice()
  if (snapshot === '') return messages
  const block: AnthropicTextBlock = { type: 'text', text: snapshot }
  const last = history[history.length - 1]
  if (last === undefined || last.role !== 'user') {
    messages.push({ role: 'user', content: [block] })
    return messages
  }
  const content = typeof last.content === 'string' ? [{ type: 'text', text: last.content }, block] : [...last.content, block]
  messages[messages.length - 1] = { ...last, content } as M
  return messages
}

/** `cache_control` markers already set on the history's content blocks. */
function markersIn(history: readonly AnthropicMessageLike[]): number {
  let count = 0
  for (const message of history) {
    if (typeof message !== 'object' || message === null || !Array.isArray(message.content)) continue
    for (const block of message.content as readonly AnthropicContentBlockLike[]) {
      if (typeof block === 'object' && block !== null && block.cache_control != null) count++
    }
  }
  return count
}

/** The Messages API requires an object schema: `type: 'object'` is added when missing; another type is an error. */
function inputSchemaOf(name: string, parameters: Readonly<Record<string, unknown>>): AnthropicTool['input_schema'] {
  if (parameters.type === 'object') return parameters as AnthropicTool['input_schema']
  if (parameters.type === undefined) return { ...parameters, type: 'object' }
  throw new TypeError(
    `toAnthropic option "assembly" has tool "${name}" whose parameters have type ${describe(parameters.type)}; the Messages API takes an object schema ({ type: 'object', properties })`,
  )
}
