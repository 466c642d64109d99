/**
 * Anthropic's cache markers as `toAnthropic` and `toAISDK` place them (SPEC
 * §4.3): which of promptloom's candidates fit beside the caller's markers,
 * and which TTL each gets.
 *
 *   prefix order   tools ─▶ system blocks ─▶ messages
 *   markers        [t]      [s1] [s2]        [c1] … [h] … [c2]
 *                  own      own               caller  own   caller
 *
 * At most `ANTHROPIC_MAX_CACHE_MARKERS` in one request, the caller's counted
 * at any depth. The caller's markers are never moved, removed or changed;
 * promptloom's take what is left in priority order (history, system latest
 * first, tools). Anthropic rejects a longer TTL after a shorter one in prefix
 * order, so each own marker is raised to the longest TTL after it, then
 * lowered to the shortest caller TTL before it: valid whenever the caller's
 * own markers are in order (checked first).
 */

import { describeValue } from '../assembly/errors.js'

/** Anthropic's limit on `cache_control` markers in one request (tools, system and messages together). */
export const ANTHROPIC_MAX_CACHE_MARKERS = 4

/** How long a cached prefix lives at Anthropic: `'5m'` (the default when no `ttl` is written) or `'1h'`. */
export type CacheTtl = '5m' | '1h'

/**
 * The `ttl` option of `toAnthropic` / `toAISDK`: one TTL for every marker
 * promptloom places, or one per kind of marked block (`static` and `session`
 * system blocks, the `history` breakpoint; the tools marker takes `static`).
 * A kind left out writes no `ttl` (5 minutes), unless the order rule raises it.
 */
export type CacheTtlOption =
  | CacheTtl
  | {
      /** The TTL of the markers on `static` system blocks and on the tools. */
      readonly static?: CacheTtl
      /** The TTL of the markers on `session` system blocks. */
      readonly session?: CacheTtl
      /** The TTL of the history breakpoint. */
      readonly history?: CacheTtl
    }

/** A resolved `ttl` option: the TTL to ask for per kind of own marker (`undefined`: none written). */
export interface TtlPlan {
  readonly static: CacheTtl | undefined
  readonly session: CacheTtl | undefined
  readonly history: CacheTtl | undefined
}

const TTLS: readonly unknown[] = ['5m', '1h']
const TTL_KINDS = ['static', 'session', 'history'] as const

/** Validates `ttl` of the builder `fn`; throws a `TypeError` naming `ttl` (or its key). */
export function ttlPlanOf(fn: string, ttl: unknown): TtlPlan {
  if (ttl === undefined) return { static: undefined, session: undefined, history: undefined }
  if (TTLS.includes(ttl)) return { static: ttl as CacheTtl, session: ttl as CacheTtl, history: ttl as CacheTtl }
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
  return { static: record.static as CacheTtl | undefined, session: record.session as CacheTtl | undefined, history: record.history as CacheTtl | undefined }
}

/** A marker already in the caller's history. */
export interface CallerMarker {
  /** The index of the history message that holds it. */
  readonly message: number
  /** The index of the top-level content block (or part) that holds it, or is it; `Infinity` for a message-level marker. */
  readonly block: number
  readonly ttl: CacheTtl
}

/** The TTL a caller's marker asks for: `'1h'`, or Anthropic's 5-minute default. */
export function callerTtl(marker: unknown): CacheTtl {
  return typeof marker === 'object' && marker !== null && (marker as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m'
}

/**
 * Throws a `TypeError` when the caller's markers (in prefix order) put a
 * longer TTL after a shorter one, which Anthropic rejects: promptloom never
 * changes the caller's markers, so it cannot make such a request valid.
 */
export function checkCallerOrder(fn: string, historyName: string, markers: readonly CallerMarker[]): void {
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

/** A place promptloom may mark: the tools, the history breakpoint, or a system block by index. */
export type OwnMarker = 'tools' | 'history' | number

/** What `placeOwnMarkers` needs to know about one request. */
export interface MarkerInput {
  readonly blocks: readonly { readonly cacheBreakpoint: boolean; readonly stability: string }[]
  /** The tools marker is wanted (the request declares tools); it is placed only beside a system breakpoint. */
  readonly tools: boolean
  /** The history breakpoint is wanted (a markable block the caller has not marked). */
  readonly history: boolean
  readonly callers: readonly CallerMarker[]
  /** Whether a caller's marker comes before the history breakpoint in prefix order. */
  readonly beforeHistory: (marker: CallerMarker) => boolean
  readonly ttl: TtlPlan
}

/**
 * promptloom's markers for one request: the places that get one, each with
 * the TTL to write (`undefined`: none, Anthropic's 5 minutes). The free
 * places beside the caller's markers go to the history breakpoint, then the
 * system breakpoints latest first, then the tools; the TTLs then follow the
 * order rule of the module header.
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

  // Raise each own marker to the longest TTL after it, then lower it to the shortest caller TTL before it.
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
 * Walks `root` depth-first and calls `found` for every object whose marker
 * `markerOf` reports, children before their holder (a block's nested content
 * precedes its end in prefix order). Keys `skip` accepts hold arbitrary data
 * (tool inputs) or the markers themselves, never further markers. An object
 * reached twice counts twice, as it is serialized twice; iterative, so any
 * depth works, and a cycle (which no request can serialize) is not followed.
 */
export function walkMarkers(root: unknown, markerOf: (node: object) => unknown, skip: (node: object, key: string) => boolean, found: (marker: unknown) => void): void {
  const onPath = new Set<object>()
  // Each object is pushed to enter, then its leave below its children: it runs once they are done.
  const stack: { node: object; leave: boolean }[] = []
  const push = (value: unknown): void => {
    if (typeof value === 'object' && value !== null && !onPath.has(value)) stack.push({ node: value, leave: false })
  }
  push(root)
  while (stack.length > 0) {
    const { node, leave } = stack.pop()!
    if (leave) {
      onPath.delete(node)
      if (!Array.isArray(node)) {
        const marker = markerOf(node)
        if (marker != null) found(marker)
      }
      continue
    }
    if (onPath.has(node)) continue
    onPath.add(node)
    stack.push({ node, leave: true })
    const children = Array.isArray(node) ? node : Object.keys(node).filter((key) => !skip(node, key)).map((key) => (node as Record<string, unknown>)[key])
    // Pushed last to first, so they are visited first to last.
    for (let i = children.length - 1; i >= 0; i--) push(children[i])
  }
}
