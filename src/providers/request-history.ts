/**
 * `historyOf(request)`: the conversation to keep after a request, without
 * anything promptloom added only for that request (SPEC §4.3). A request's
 * messages carry promptloom's history cache marker, which must not be fed
 * back (old markers would pile up past Anthropic's limit of 4), and, for
 * OpenAI Chat, the leading system message.
 *
 * Each builder records, beside the request it returns, the history it would
 * keep: the caller's messages with the snapshot placed as in the request
 * (kept by default) and no promptloom marker. The record lives in one
 * WeakMap keyed by the request object, so a copy of a request has none.
 */

import { describeValue } from '../assembly/errors.js'
import type { AISDKMessageLike, AISDKRequest, AISDKSnapshotMessage } from './ai-sdk.js'
import type { AnthropicMessageLike, AnthropicRequest, AnthropicSnapshotMessage } from './anthropic.js'
import type { OpenAIChatMessageLike, OpenAIChatRequest, OpenAIChatSnapshotMessage } from './openai-chat.js'
import type { OpenAIResponsesRequest, OpenAIResponsesSnapshotItem } from './openai-responses.js'

/** Options of `historyOf`. */
export interface HistoryOptions {
  /**
   * Keep the runtime-context snapshot the request carried, where the request
   * placed it. Default `true`: the right choice when you send a snapshot only
   * when it changed (the step surface's `context/snapshot` event); pass
   * `false` to get exactly the history you passed in.
   */
  readonly snapshot?: boolean
}

/** What a builder keeps beside its request. */
interface HistoryRecord {
  /** The caller's history with the snapshot placed as in the request, no promptloom marker. */
  readonly withSnapshot: readonly unknown[]
  /** The caller's history as passed. */
  readonly caller: readonly unknown[]
}

/** The one place a request's history record is kept (see the module comment). */
const RECORDS = new WeakMap<object, HistoryRecord>()

/** Records the histories of `request` (called by each builder before it returns). */
export function recordHistory(request: object, withSnapshot: readonly unknown[], caller: readonly unknown[]): void {
  RECORDS.set(request, { withSnapshot, caller })
}

/**
 * The conversation to keep after `request` (a result of `toAnthropic`,
 * `toAISDK`, `toOpenAIChat` or `toOpenAIResponses`): the history you passed,
 * with the request's snapshot where the request placed it (unless
 * `snapshot: false`), and none of promptloom's cache markers or leading
 * system message. A new array; your own messages and markers are shared
 * unchanged. Append the model's reply to it and pass it as the next step's
 * history. Throws a `TypeError` for anything but a builder's own result
 * object (a spread or JSON copy has no record).
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
