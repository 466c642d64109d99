/**
 * "Could dispatching this event reach anyone?" — answered from Cordis 4's
 * events internals, so a waterfall that nobody listens to can be skipped.
 *
 * The Cordis contract relied on (cordis@4.0.0-rc.10, lib/index.js
 * `EventsService`; pinned by test/assembly/listeners.test.ts):
 *
 * 1. Every listener `ctx.on(name, cb, options)` registers lives in
 *    `events._hooks[name]`, an array of `{ ctx, callback, prepend?, global? }`
 *    hooks (`prepend` only decides unshift or push; `global` only bypasses the
 *    caller's filter). `_hooks` is a null-prototype object owned by the raw
 *    (unproxied) service; a disposed listener is spliced out, and the array is
 *    deleted once empty.
 * 2. `waterfall(thisArg, name, ...args, inner)` (like `emit`, `serial`, …)
 *    resolves its callbacks only from `_hooks[name]`, keeping a hook when
 *    `hook.global`, or the thisArg has no `Context.filter`, or the filter
 *    accepts `hook.ctx`. With no callback left it returns `inner()` itself:
 *    no wrapper, no promise of its own.
 * 3. Before resolving, a dispatch of any name that is not a string starting
 *    with `internal/` emits `internal/dispatch` (mode, name, args, thisArg)
 *    when `_hooks['internal/dispatch']` is non-empty: such an observer sees
 *    every dispatch, so skipping one would be visible to it.
 * 4. An `internal/listener` interceptor that claims a registration (as
 *    Cordis' own one does for `internal/update`) keeps that listener out of
 *    `_hooks`, and `waterfall` never calls it.
 *
 * Filters are ignored on purpose: the answer is "maybe" whenever any hook
 * exists, so it never skips a listener a scope filter would have accepted.
 */

/** The part of Cordis' raw events service that `hasListeners` reads. */
export interface CordisEventsInternals {
  readonly _hooks?: unknown
}

const DISPATCH_OBSERVER = 'internal/dispatch'

function hookCount(hooks: object, name: string | symbol): number {
  const list = (hooks as Record<string | symbol, unknown>)[name]
  // Not an array: an internal we do not know; count it as a listener (never skip wrongly).
  if (list === undefined) return 0
  return Array.isArray(list) ? list.length : 1
}

/**
 * Whether dispatching `name` through `events` (Cordis' raw events service,
 * `ctx.events[Symbol.for('cordis.original')]`) could reach any listener or
 * dispatch observer. `false` means a waterfall of `name` would only return
 * its `inner()` result. Allocates nothing and calls no listener; answers
 * `true` when the internals are not the shape described above (a Cordis
 * whose layout changed is never skipped, only slower).
 */
export function hasListeners(events: CordisEventsInternals, name: string | symbol): boolean {
  const hooks = events._hooks
  if (typeof hooks !== 'object' || hooks === null) return true
  if (hookCount(hooks, name) > 0) return true
  const observed = typeof name !== 'string' || !name.startsWith('internal/')
  return observed && hookCount(hooks, DISPATCH_OBSERVER) > 0
}
