// What every request builder shares: resolved options, and `historyOf` (SPEC §4.3), without markers that would pile up.

import { describeValue, optionError } from '../assembly/errors.js'
import { TOOL_ORDER_REST } from '../assembly/orders.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { render, renderContextSnapshot } from '../render/render.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { AISDKMessageLike, AISDKRequest, AISDKSnapshotMessage } from './ai-sdk.js'
import type { AnthropicMessageLike, AnthropicRequest, AnthropicSnapshotMessage } from './anthropic.js'
import type { OpenAIChatMessageLike, OpenAIChatRequest, OpenAIChatSnapshotMessage } from './openai.js'
import type { OpenAIResponsesRequest, OpenAIResponsesSnapshotItem } from './openai.js'

/** The part of an assembly a request builder reads. */
export type RequestAssembly = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

/** The options every request builder shares. */
export interface RequestOptions {
  readonly assembly: RequestAssembly
  /** The step's `RenderedPrompt` (e.g. `StepResult.rendered`); `render(assembly)` when omitted. */
  readonly rendered?: RenderedPrompt
  /** The runtime-context snapshot to send; default `renderContextSnapshot(assembly)`; `false` or `''` for none. */
  readonly snapshot?: string | false
}

/** Where the trailing run of messages with one of `roles` starts: `history.length` when there is none. */
export function trailingInstructionsStart(history: readonly unknown[], roles: readonly string[]): number {
  return history.findLastIndex((message) => !roles.includes((message as { role?: unknown }).role as string)) + 1
}

/** `history` (never mutated) with the snapshot as a user message at index `at` (before its trailing instructions). */
export function withSnapshot<T>(history: readonly T[], snapshot: string, at: number): (T | OpenAIChatSnapshotMessage)[] {
  const placed: readonly (T | OpenAIChatSnapshotMessage)[] = history
  return snapshot === '' ? placed.slice() : placed.toSpliced(at, 0, { role: 'user', content: snapshot })
}

/** Validates `options` of the builder `fn`; resolves its prompt, tools and snapshot (`''`: none). Throws a `TypeError` naming what is bad. */
export function resolveRequest(fn: string, options: RequestOptions, history: unknown, historyName: string, rule: 'required' | 'optional') {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${fn} expects an options object { assembly, ${historyName}, … } (got ${describeValue(options)})`)
  }
  const { assembly, snapshot } = options
  if (typeof assembly !== 'object' || assembly === null || !Array.isArray(assembly.tools) || !Array.isArray(assembly.sections)) {
    throw optionError(fn, 'assembly', 'a prompt assembly', assembly, '; pass the result of systemPrompt.assemble()')
  }
  assembly.tools.forEach((tool: unknown, index) => {
    if (typeof tool !== 'object' || tool === null) {
      throw new TypeError(`${fn} option "assembly" has ${describeValue(tool)} as tool ${index}; each tool must be a schema { name, description, parameters }`)
    }
    const { name, parameters } = tool as Partial<ToolSchema>
    if (name === TOOL_ORDER_REST) {
      throw new TypeError(`${fn} option "assembly" has a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`)
    }
    const label = typeof name === 'string' ? `tool "${name}"` : `tool ${index}`
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
      throw new TypeError(
        `${fn} option "assembly" has ${label} whose parameters are ${describeValue(parameters)}; a tool's parameters must be a JSON Schema object, e.g. { type: 'object', properties: {} }`,
      )
    }
    // Anthropic and OpenAI both take only an object schema at the top (a missing `type` means one).
    if (parameters.type !== undefined && parameters.type !== 'object') {
      throw new TypeError(`${fn} option "assembly" has ${label} whose parameters have type ${describeValue(parameters.type)}; ` +
        "tool parameters must be an object schema ({ type: 'object', properties })")
    }
  })
  if (!Array.isArray(history)) {
    throw optionError(fn, historyName, "an array of the provider's messages", history, '; pass [] for none')
  }
  if (snapshot !== undefined && snapshot !== false && typeof snapshot !== 'string') {
    throw optionError(fn, 'snapshot', 'a string, or false for none', snapshot)
  }
  const rendered = options.rendered ?? render(assembly)
  if (typeof rendered !== 'object' || rendered === null || typeof rendered.text !== 'string' || !Array.isArray(rendered.blocks)) {
    throw optionError(fn, 'rendered', 'a RenderedPrompt', rendered, '; pass StepResult.rendered or omit it')
  }
  history.forEach((message, i) => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw new TypeError(`${fn} option "${historyName}" has ${describeValue(message)} at index ${i}; every element must be a message object of the provider's format`)
    }
    const { content } = message as { content?: unknown }
    if (typeof content === 'string' || Array.isArray(content) || (rule === 'optional' && content == null)) return
    throw new TypeError(
      `${fn} option "${historyName}" has a message at index ${i} whose content is ${describeValue(content)}; content must be a string or an array of content parts`,
    )
  })
  const text = snapshot === undefined ? renderContextSnapshot(assembly) : snapshot === false ? '' : snapshot
  return { rendered, tools: assembly.tools, snapshot: text }
}

/** Options of `historyOf`. */
export interface HistoryOptions {
  /** Keep the snapshot the request carried, where it placed it. Default `true`; `false` gives exactly the history you passed in. */
  readonly snapshot?: boolean
}

const HISTORIES = new WeakMap<object, { readonly withSnapshot: readonly unknown[]; readonly caller: readonly unknown[] }>()

/** `request`, recorded for `historyOf` with the history it sent (without promptloom's marker) and a copy of the `caller`'s. */
export function recorded<R extends object>(request: R, withSnapshot: readonly unknown[], caller: readonly unknown[]): R {
  HISTORIES.set(request, { withSnapshot, caller: caller.slice() })
  return request
}

/**
 * The conversation to keep after `request` (a builder's result): the history you passed, with the request's snapshot
 * where the request placed it, and none of promptloom's cache markers or leading system message. A new array; your own
 * messages are shared. Throws a `TypeError` for anything but a builder's own result object (a spread or copy has no record).
 */
export function historyOf<M extends AnthropicMessageLike>(request: AnthropicRequest<M>, options?: HistoryOptions): (M | AnthropicSnapshotMessage)[]
export function historyOf<M extends AISDKMessageLike>(request: AISDKRequest<M>, options?: HistoryOptions): (M | AISDKSnapshotMessage)[]
export function historyOf<M extends OpenAIChatMessageLike>(request: OpenAIChatRequest<M>, options?: HistoryOptions): (M | OpenAIChatSnapshotMessage)[]
export function historyOf<I extends object>(request: OpenAIResponsesRequest<I>, options?: HistoryOptions): (I | OpenAIResponsesSnapshotItem)[]
export function historyOf(request: object, options: HistoryOptions = {}): unknown[] {
  const record = HISTORIES.get(request)
  if (record === undefined) {
    throw new TypeError(
      `historyOf expects the request object returned by toAnthropic, toAISDK, toOpenAIChat or toOpenAIResponses (got ${describeValue(request)}); ` +
        'a spread or serialized copy carries no history — keep the returned object and spread it into the SDK call',
    )
  }
  const snapshot = options?.snapshot
  if (snapshot !== undefined && typeof snapshot !== 'boolean') throw optionError('historyOf', 'snapshot', 'a boolean', snapshot)
  return (snapshot === false ? record.caller : record.withSnapshot).slice()
}
