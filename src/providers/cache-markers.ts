/**
 * Anthropic's cache markers as `toAnthropic` and `toAISDK` place them (SPEC §4.3): the caller's, counted at any depth, never
 * change; promptloom's take what is left of `ANTHROPIC_MAX_CACHE_MARKERS` in priority order (history, system latest first, tools).
 */

import { describeValue } from '../assembly/errors.js'
import { resolveRequest, trailingInstructionsStart, type RequestOptions } from './request-input.js'

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

type TtlPlan = Readonly<Record<(typeof TTL_KINDS)[number], CacheTtl | undefined>>

function ttlPlanOf(fn: string, ttl: unknown): TtlPlan {
  if (ttl === undefined || TTLS.includes(ttl)) {
    const all = ttl as CacheTtl | undefined
    return { static: all, session: all, history: all }
  }
  if (typeof ttl !== 'object' || ttl === null || Array.isArray(ttl)) {
    throw new TypeError(`${fn} option "ttl" must be '5m', '1h' or { static?, session?, history? } of those (got ${describeValue(ttl)})`)
  }
  for (const key of Object.keys(ttl)) {
    if (!(TTL_KINDS as readonly string[]).includes(key)) {
      throw new TypeError(
        `${fn} option "ttl" has an unknown key "${key}"; its keys are static, session and history (volatile blocks are never marked)`,
      )
    }
  }
  const record = ttl as Record<string, unknown>
  for (const key of TTL_KINDS) {
    if (record[key] !== undefined && !TTLS.includes(record[key])) {
      throw new TypeError(`${fn} option "ttl.${key}" must be '5m' or '1h' (got ${describeValue(record[key])})`)
    }
  }
  return record as TtlPlan
}

export function ephemeral(ttl: CacheTtl | undefined): { type: 'ephemeral'; ttl?: CacheTtl } {
  return ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl }
}

/** A marker already in the caller's history. */
export interface CallerMarker {
  readonly message: number
  /** The top-level content block (or part) that holds it, or is it; `Infinity` for a message-level marker. */
  readonly block: number
  readonly ttl: CacheTtl
}

/** The TTL a caller's marker asks for: `'1h'`, or Anthropic's 5-minute default. */
export function callerTtl(marker: unknown): CacheTtl {
  return typeof marker === 'object' && marker !== null && (marker as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m'
}

/** Throws a `TypeError` when the caller's markers put a longer TTL after a shorter one, which Anthropic rejects. */
function checkCallerOrder(fn: string, historyName: string, markers: readonly CallerMarker[]): void {
  let shortest: CallerMarker | undefined
  for (const marker of markers) {
    if (shortest !== undefined && marker.ttl === '1h' && shortest.ttl === '5m') {
      throw new TypeError(
        `${fn} option "${historyName}" has a cache marker with ttl '1h' at index ${marker.message} after a 5-minute one at index ${shortest.message}; ` +
          `Anthropic rejects a longer-lived marker after a shorter-lived one — give the later marker the shorter TTL or the earlier one '1h'`,
      )
    }
    if (shortest === undefined || marker.ttl === '5m') shortest = marker
  }
}

/** The validated inputs of `toAnthropic` / `toAISDK`, and `split`, where the snapshot goes (before trailing system messages, which stay last). */
export function resolveMarkedRequest<M>(
  fn: string,
  options: RequestOptions & { readonly messages: readonly M[]; readonly historyBreakpoint?: boolean; readonly ttl?: CacheTtlOption },
  callerMarkersOf: (history: readonly M[]) => CallerMarker[],
) {
  const resolved = resolveRequest(fn, options, options?.messages, 'messages', 'required')
  const history = options.messages
  const { historyBreakpoint = true } = options
  if (typeof historyBreakpoint !== 'boolean') {
    throw new TypeError(`${fn} option "historyBreakpoint" must be a boolean (got ${describeValue(historyBreakpoint)})`)
  }
  const ttl = ttlPlanOf(fn, options.ttl)
  const callers = callerMarkersOf(history)
  checkCallerOrder(fn, 'messages', callers)
  const split = resolved.snapshot === '' ? history.length : trailingInstructionsStart(history, ['system'])
  return { ...resolved, history, historyBreakpoint, ttl, callers, split }
}

/** A place promptloom may mark: a system block by index, the tools or the history. */
export type OwnMarker = 'tools' | 'history' | number

interface MarkerInput {
  readonly blocks: readonly { readonly cacheBreakpoint: boolean; readonly stability: string }[]
  /** The tools marker is placed only beside a system breakpoint. */
  readonly tools: boolean
  readonly history: boolean
  readonly callers: readonly CallerMarker[]
  readonly beforeHistory: (marker: CallerMarker) => boolean
  readonly ttl: TtlPlan
}

/**
 * promptloom's markers for one request, each with the TTL to write (`undefined`: none). Anthropic rejects a longer TTL after a
 * shorter one, so each is raised to the longest TTL after it, then lowered to the shortest caller TTL before it.
 */
export function placeOwnMarkers(input: MarkerInput): Map<OwnMarker, CacheTtl | undefined> {
  const { blocks, callers, ttl } = input
  const systemLatestFirst: number[] = []
  for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i]!.cacheBreakpoint) systemLatestFirst.push(i)
  const candidates: OwnMarker[] = [...(input.history ? ['history' as const] : []), ...systemLatestFirst]
  if (input.tools && systemLatestFirst.length > 0) candidates.push('tools')
  const kept = new Set(candidates.slice(0, Math.max(0, ANTHROPIC_MAX_CACHE_MARKERS - callers.length)))

  // Every marker of the request in prefix order: tools, system blocks, then the history with the caller's around it.
  const planned: { readonly own: OwnMarker | undefined; readonly ttl: CacheTtl | undefined }[] = []
  const own = (place: OwnMarker, wanted: CacheTtl | undefined): void => {
    if (kept.has(place)) planned.push({ own: place, ttl: wanted })
  }
  own('tools', ttl.static)
  blocks.forEach((block, index) => own(index, block.stability === 'static' ? ttl.static : ttl.session))
  for (const marker of callers) if (input.beforeHistory(marker)) planned.push({ own: undefined, ttl: marker.ttl })
  own('history', ttl.history)
  for (const marker of callers) if (!input.beforeHistory(marker)) planned.push({ own: undefined, ttl: marker.ttl })

  const ttls = planned.map((marker) => marker.ttl)
  let laterLongest: CacheTtl = '5m'
  for (let i = planned.length - 1; i >= 0; i--) {
    if (planned[i]!.own !== undefined && laterLongest === '1h') ttls[i] = '1h'
    if (ttls[i] === '1h') laterLongest = '1h'
  }
  const out = new Map<OwnMarker, CacheTtl | undefined>()
  let callerShortest: CacheTtl = '1h'
  planned.forEach((marker, i) => {
    if (marker.own === undefined) {
      if (marker.ttl === '5m') callerShortest = '5m'
    } else out.set(marker.own, callerShortest === '5m' && ttls[i] === '1h' ? '5m' : ttls[i])
  })
  return out
}

/**
 * Calls `found` for every marker under `root` in prefix order (children before their holder), skipping keys that hold data. An object
 * reached twice counts twice, as it is serialized twice; iterative for any depth; a cycle is not followed.
 */
export function walkMarkers(root: unknown, markerOf: (node: object) => unknown, skip: (node: object, key: string) => boolean, found: (marker: unknown) => void): void {
  const onPath = new Set<object>()
  // An object is pushed to enter, then its leave below its children.
  const stack: { node: object; leave: boolean }[] = []
  const push = (value: unknown): void => {
    if (typeof value === 'object' && value !== null && !onPath.has(value)) stack.push({ node: value, leave: false })
  }
  push(root)
  while (stack.length > 0) {
    const { node, leave } = stack.pop()!
    if (leave) {
      onPath.delete(node)
      const marker = Array.isArray(node) ? undefined : markerOf(node)
      if (marker != null) found(marker)
      continue
    }
    if (onPath.has(node)) continue
    onPath.add(node)
    stack.push({ node, leave: true })
    const children = Array.isArray(node) ? node : Object.keys(node).filter((key) => !skip(node, key)).map((key) => (node as Record<string, unknown>)[key])
    for (let i = children.length - 1; i >= 0; i--) push(children[i])
  }
}
