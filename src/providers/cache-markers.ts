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
 * promptloom's fill the free slots in priority order (history, system latest
 * first, tools). Anthropic rejects a longer TTL after a shorter one in prefix
 * order, so each own marker is raised to the longest TTL after it, then
 * lowered to the shortest caller TTL before it: valid whenever the caller's
 * own markers are in order (checked first).
 */

import { describe } from './request-input.js'

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
    throw new TypeError(`${fn} option "ttl" must be '5m', '1h' or { static?, session?, history? } of those (got ${describe(ttl)})`)
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
      throw new TypeError(`${fn} option "ttl.${key}" must be '5m' or '1h' (got ${describe(record[key])})`)
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

/** One marker of the request in prefix order: promptloom's (with the TTL it asks for) or the caller's. */
export type PlannedMarker = { readonly own: true; readonly ttl: CacheTtl | undefined } | { readonly own: false; readonly ttl: CacheTtl }

/**
 * The TTL to write on each own marker of `markers` (prefix order), by index;
 * `undefined` writes none (5 minutes). Each is raised to the longest TTL of any
 * marker after it, then lowered to the shortest caller TTL before it.
 */
export function plannedTtls(markers: readonly PlannedMarker[]): (CacheTtl | undefined)[] {
  const out = new Array<CacheTtl | undefined>(markers.length)
  let laterLongest: CacheTtl = '5m'
  for (let i = markers.length - 1; i >= 0; i--) {
    const marker = markers[i]!
    if (marker.own) out[i] = laterLongest === '1h' ? '1h' : marker.ttl
    if ((marker.own ? out[i] : marker.ttl) === '1h') laterLongest = '1h'
  }
  let callerShortest: CacheTtl = '1h'
  for (let i = 0; i < markers.length; i++) {
    const marker = markers[i]!
    if (!marker.own) {
      if (marker.ttl === '5m') callerShortest = '5m'
      out[i] = undefined
    } else if (callerShortest === '5m' && out[i] === '1h') out[i] = '5m'
  }
  return out
}

/** Own candidate slots in priority order: the history breakpoint, the system breakpoints latest first, the tools. */
export function keptCandidates<T>(history: T | undefined, systemLatestFirst: readonly T[], tools: T | undefined, free: number): Set<T> {
  const candidates: T[] = []
  if (history !== undefined) candidates.push(history)
  candidates.push(...systemLatestFirst)
  if (tools !== undefined) candidates.push(tools)
  return new Set(candidates.slice(0, Math.max(0, free)))
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
