/**
 * `historyOf(request)` (SPEC §4.3): the conversation to keep, without promptloom's history marker (old markers would pile
 * up past Anthropic's limit). Builders record it in one WeakMap keyed by the request object, so a copy of a request has none.
 */

import { describeValue } from '../assembly/errors.js'
import type { AISDKMessageLike, AISDKRequest, AISDKSnapshotMessage } from './ai-sdk.js'
import type { AnthropicMessageLike, AnthropicRequest, AnthropicSnapshotMessage } from './anthropic.js'
import type { OpenAIChatMessageLike, OpenAIChatRequest, OpenAIChatSnapshotMessage } from './openai-chat.js'
import type { OpenAIResponsesRequest, OpenAIResponsesSnapshotItem } from './openai-responses.js'

/** Options of `historyOf`. */
export interface HistoryOptions {
  /** Keep the snapshot the request carried, where it placed it. Default `true`; `false` gives exactly the history you passed in. */
  readonly snapshot?: boolean
}

interface HistoryRecord {
  /** The caller's history with the snapshot placed as in the request, no promptloom marker. */
  readonly withSnapshot: readonly unknown[]
  readonly caller: readonly unknown[]
}

const RECORDS = new WeakMap<object, HistoryRecord>()

/** Each builder records its request's histories before it returns. */
export function recordHistory(request: object, withSnapshot: readonly unknown[], caller: readonly unknown[]): void {
  RECORDS.set(request, { withSnapshot, caller })
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
  const record = typeof request === 'object' && request !== null ? RECORDS.get(request) : undefined
  if (record === undefined) {
    throw new TypeError(
      `historyOf expects the request object returned by toAnthropic, toAISDK, toOpenAIChat or toOpenAIResponses (got ${describeValue(request)}); ` +
        'a spread or serialized copy carries no history — keep the returned object and spread it into the SDK call',
    )
  }
  const snapshot = options?.snapshot
  if (snapshot !== undefined && typeof snapshot !== 'boolean') {
    throw new TypeError(`historyOf option "snapshot" must be a boolean (got ${describeValue(snapshot)})`)
  }
  return (snapshot === false ? record.caller : record.withSnapshot).slice()
}
