// Anthropic's cache markers as `toAnthropic` and `toAISDK` place them (SPEC §4.3): the caller's, counted at any depth, never
// change; promptloom's take what is left of `ANTHROPIC_MAX_CACHE_MARKERS` by priority (history, system latest first, tools).

import type { AnthropicCacheControl } from './anthropic.js'
import { optionError } from '../assembly/errors.js'
import { resolveRequest, trailingInstructionsStart, type RequestOptions } from './request.js'
import { PART_SEPARATOR, type PromptBlock } from '../render/rendered-prompt.js'

/** Anthropic's limit on `cache_control` markers in one request (tools, system and messages together). */
export const ANTHROPIC_MAX_CACHE_MARKERS = 4

/** How long a cached prefix lives at Anthropic: `'5m'` (the default when no `ttl` is written) or `'1h'`. */
export type CacheTtl = '5m' | '1h'

/** The `ttl` of promptloom's markers, or one per kind (the tools take `static`'s); a kind left out writes none unless the TTL order rule raises it. */
export type CacheTtlOption =
  | CacheTtl
  | {
      readonly static?: CacheTtl
      readonly session?: CacheTtl
      readonly history?: CacheTtl
    }

const TTLS: readonly unknown[] = ['5m', '1h']
const TTL_KINDS = ['static', 'session', 'history'] as const
type TtlPlan = Exclude<CacheTtlOption, CacheTtl>

function ttlPlanOf(fn: string, ttl: unknown): TtlPlan {
  if (ttl === undefined || TTLS.includes(ttl)) return { static: ttl, session: ttl, history: ttl } as TtlPlan
  if (typeof ttl !== 'object' || ttl === null || Array.isArray(ttl)) {
    throw optionError(fn, 'ttl', "'5m', '1h' or { static?, session?, history? } of those", ttl)
  }
  const unknownKey = Object.keys(ttl).find((key) => !(TTL_KINDS as readonly string[]).includes(key))
  if (unknownKey !== undefined) {
    throw new TypeError(
      `${fn} option "ttl" has an unknown key "${unknownKey}"; its keys are static, session and history (volatile blocks are never marked)`,
    )
  }
  const record = ttl as Record<string, unknown>
  const bad = TTL_KINDS.find((key) => record[key] !== undefined && !TTLS.includes(record[key]))
  if (bad !== undefined) throw optionError(fn, `ttl.${bad}`, "'5m' or '1h'", record[bad])
  return record as TtlPlan
}

/** A place promptloom may mark: a system block by index, the tools or the history. */
export type OwnMarker = 'tools' | 'history' | number

/** A place in the history: a message and its top-level content block (`Infinity`: the message itself). */
type MarkerPlace = { readonly message: number; readonly block: number }

/** A marker already in the caller's history, at the top-level content block (or part) that holds it, or is it. */
type CallerMarker = MarkerPlace & { readonly ttl: CacheTtl }

type Content = string | readonly unknown[] | undefined

/** A message's content as blocks (a copy): string content is one text block. */
export function blocksOf(content: Content): unknown[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : [...(content ?? [])]
}

/** The last block of `history[0…end)` that can carry a marker (an object; no empty text, no `skip` type), and its blocks. */
export function lastMarkable(history: readonly { readonly content?: Content }[], end: number, skip: readonly string[]) {
  const markable = ({ type, text }: { type?: unknown; text?: unknown }) =>
    !skip.includes(type as string) && !(type === 'text' && text === '')
  for (let message = end - 1; message >= 0; message--) {
    const blocks = blocksOf(history[message]!.content)
    const block = blocks.findLastIndex((candidate) => typeof candidate === 'object' && candidate !== null && markable(candidate))
    if (block !== -1) return { message, block, blocks }
  }
  return undefined
}

/** Where a history holds markers: `markerOf` a node; `skip`, the keys that hold data; `onMessage`: on a message itself too. */
export interface MarkerFormat<M> {
  readonly markerOf: (node: object) => unknown
  readonly skip: (node: object, key: string) => boolean
  readonly onMessage: boolean
  /** The request has a tools marker place (the AI SDK's tools are the caller's, out of sight). */
  readonly marksTools: boolean
  /** The history marker's place in `history[0…end)`; `undefined`: none, or it is marked already. */
  readonly historyTarget: (history: readonly M[], end: number) => MarkerPlace | undefined
  /** Where the snapshot goes, given the place before the trailing system messages; default that place. */
  readonly snapshotAt?: (history: readonly M[], split: number) => number
}

/** The caller's markers in prefix order, parts (any depth) before their message; throws at a longer TTL after a shorter one. */
function callerMarkersOf(fn: string, history: readonly unknown[], format: MarkerFormat<never>): CallerMarker[] {
  const markers: CallerMarker[] = []
  let last5m: CallerMarker | undefined
  const add = (message: number, block: number, marker: unknown): void => {
    // Without `ttl: '1h'`, Anthropic's 5-minute default.
    const found: CallerMarker = { message, block, ttl: (marker as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m' }
    if (found.ttl === '5m') last5m = found
    else if (last5m !== undefined) {
      throw new TypeError(
        `${fn} option "messages" has a cache marker with ttl '1h' at index ${message} after a 5-minute one at index ${last5m.message}; ` +
          `Anthropic rejects a longer-lived marker after a shorter-lived one — give the later marker the shorter TTL or the earlier one '1h'`,
      )
    }
    markers.push(found)
  }
  history.forEach((message, index) => {
    const { content } = message as { content?: unknown }
    if (Array.isArray(content)) content.forEach((part, block) => walkMarkers(part, format, (marker) => add(index, block, marker)))
    const own = format.onMessage ? format.markerOf(message as object) : undefined
    if (own != null) add(index, Infinity, own)
  })
  return markers
}

/** `toAnthropic`/`toAISDK`'s validated inputs, the snapshot's index `split`, promptloom's markers `own` and history `target`. */
export function resolveMarkedRequest<M>(
  fn: string,
  options: RequestOptions & { readonly messages: readonly M[]; readonly historyBreakpoint?: boolean; readonly ttl?: CacheTtlOption },
  format: MarkerFormat<M>,
) {
  const resolved = resolveRequest(fn, options, options?.messages, 'messages', 'required')
  const { messages: history, historyBreakpoint = true } = options
  if (typeof historyBreakpoint !== 'boolean') throw optionError(fn, 'historyBreakpoint', 'a boolean', historyBreakpoint)
  const ttl = ttlPlanOf(fn, options.ttl)
  const callers = callerMarkersOf(fn, history, format)
  const trailing = trailingInstructionsStart(history, ['system'])
  const split = resolved.snapshot === '' ? history.length : (format.snapshotAt?.(history, trailing) ?? trailing)
  const at = historyBreakpoint ? format.historyTarget(history, split) : undefined

  // promptloom's markers (no `ttl`: 5 min): tools only beside a system breakpoint, history only `at` a place. Anthropic rejects
  // a longer TTL after a shorter one: each rises to the longest TTL after it, then drops to the shortest caller TTL before it.
  const blocks = sentBlocks(resolved.rendered.blocks)
  const systemLatestFirst = blocks.flatMap((block, index) => (block.cacheBreakpoint ? [index] : [])).reverse()
  const candidates: OwnMarker[] = [...(at ? ['history' as const] : []), ...systemLatestFirst]
  if (format.marksTools && resolved.tools.length > 0 && systemLatestFirst.length > 0) candidates.push('tools')
  const kept = new Set(candidates.slice(0, Math.max(0, ANTHROPIC_MAX_CACHE_MARKERS - callers.length)))

  // Every marker of the request in prefix order: tools, system blocks, then the history with the caller's around it.
  const beforeHistory = ({ message, block }: CallerMarker): boolean =>
    at !== undefined && (message < at.message || (message === at.message && block <= at.block))
  const callersWhere = (before: boolean) => callers.filter((marker) => beforeHistory(marker) === before)
  const planned = ([
    { own: 'tools', ttl: ttl.static },
    ...blocks.map((block, index) => ({ own: index, ttl: block.stability === 'static' ? ttl.static : ttl.session })),
    ...callersWhere(true),
    { own: 'history', ttl: ttl.history },
    ...callersWhere(false),
  ] as { readonly own?: OwnMarker; readonly ttl: CacheTtl | undefined }[]).filter(({ own }) => own === undefined || kept.has(own))

  const last1h = planned.findLastIndex((marker) => marker.ttl === '1h')
  const firstCaller5m = planned.findIndex((marker) => marker.own === undefined && marker.ttl === '5m')
  const own = new Map<OwnMarker, AnthropicCacheControl>()
  planned.forEach(({ own: place, ttl }, i) => {
    const raised = i < last1h ? '1h' : ttl
    const written = raised === '1h' && firstCaller5m !== -1 && firstCaller5m < i ? '5m' : raised
    if (place !== undefined) own.set(place, written === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: written })
  })
  return { ...resolved, blocks, history, split, own, target: own.has('history') ? at : undefined }
}

/**
 * The system blocks as sent: Anthropic rejects a text block of whitespace only, so such a block joins the next block (or
 * the previous one when it is last) with its separator; the joined block keeps the marker place of the block that ends it.
 */
function sentBlocks(blocks: readonly PromptBlock[]): readonly PromptBlock[] {
  const blank = (block: PromptBlock): boolean => block.text.trim() === ''
  if (!blocks.some(blank)) return blocks
  const join = (a: PromptBlock, b: PromptBlock, flags: PromptBlock): PromptBlock =>
    ({ ...flags, text: a.text + PART_SEPARATOR + b.text, parts: [...a.parts, ...b.parts] })
  const sent: PromptBlock[] = []
  let pending: PromptBlock | undefined
  for (const block of blocks) {
    const whole = pending === undefined ? block : join(pending, block, block)
    pending = blank(block) ? whole : undefined
    if (pending === undefined) sent.push(whole)
  }
  const last = sent.pop()
  if (last !== undefined) sent.push(pending === undefined ? last : join(last, pending, pending))
  return sent
}

/** Calls `found` per marker under `root`, children first, as serialized (twice if reached twice); cycles are not followed. */
function walkMarkers(root: unknown, { markerOf, skip }: MarkerFormat<never>, found: (marker: unknown) => void): void {
  const onPath = new Set<object>()
  // Iterative for any depth: a node is pushed to enter, then its leave below its children.
  const stack: { node: unknown; leave?: true }[] = [{ node: root }]
  while (stack.length > 0) {
    const { node, leave } = stack.pop()!
    // Only objects hold markers, and not binary data (image or file bytes).
    if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node) || node instanceof ArrayBuffer) continue
    if (leave) {
      onPath.delete(node)
      const marker = Array.isArray(node) ? undefined : markerOf(node)
      if (marker != null) found(marker)
    } else if (!onPath.has(node)) {
      onPath.add(node)
      stack.push({ node, leave: true })
      const children = Array.isArray(node) ? node : Object.keys(node).filter((key) => !skip(node, key)).map((key) => (node as Record<string, unknown>)[key])
      for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i] })
    }
  }
}
