import { attempt, attemptAsync, copyResult, expectSame, viewName, type CopyKind } from './assembly-ops.js'
import type { World } from './assembly-world.js'

// The operations on accepted results (SPEC §2 "refreshContext" and its
// Reliability bullet): accept, refresh in a chain, copy, and refresh for
// another view's scope, each mirrored on both engines.

/** Accepts a fresh preparation or assembly of view `v` on both engines; they must agree. */
export async function acceptResult(world: World, v: number, prepare: boolean): Promise<void> {
  const context = world.context(v)
  const mine = await attemptAsync(() => (prepare ? world.sp.prepare(context) : world.sp.assemble(context)))
  const theirs = await attemptAsync(() => (prepare ? world.ref.prepare(context) : world.ref.assemble(context)))
  expectSame(mine, theirs, `accepting a ${prepare ? 'preparation' : 'assembly'} of ${viewName(v)}`)
  if (mine.ok && theirs.ok) world.accepted[v] = { mine: mine.value, theirs: theirs.value }
}

/** Refreshes view `v`'s accepted result, which the refresh then replaces: the next check refreshes a refresh. */
export function refreshAccepted(world: World, v: number): void {
  const accepted = world.accepted[v]
  if (accepted === undefined) return
  const context = world.context(v)
  const mine = attempt(() => world.sp.refreshContext(accepted.mine, context))
  const theirs = attempt(() => world.ref.refreshContext(accepted.theirs, context))
  expectSame(mine, theirs, `refreshing the accepted result of ${viewName(v)}`)
  if (mine.ok && theirs.ok) world.accepted[v] = { mine: mine.value, theirs: theirs.value }
}

/**
 * Replaces view `v`'s accepted results by copies made the same way on both
 * engines. A shallow spread of a deep-spread copy shares that copy's fresh
 * `contexts` array, so it stays a deep-spread copy for `expectSameRefreshAs`.
 */
export function copyAccepted(world: World, v: number, how: CopyKind): void {
  const accepted = world.accepted[v]
  if (accepted === undefined) return
  const copied = how === 'spread' && accepted.copied === 'deep spread' ? 'deep spread' : how
  world.accepted[v] = { mine: copyResult(accepted.mine, how), theirs: copyResult(accepted.theirs, how), copied }
}

/**
 * Refreshes view `v`'s accepted result for view `as` on both engines: a
 * result that remembers its scope throws naming both scopes, a JSON or
 * structuredClone copy is refreshed for the given one.
 *
 * Not compared for a deep-spread copy (new `contexts` array) and another
 * view: the engine ties the scope to the `contexts` array it made, so it
 * refreshes such a copy for any scope, while SPEC (and the oracle) exempt
 * only copies that cannot carry the key. The disagreement is pinned by a
 * `test.fails` in test/reference.test.ts.
 */
export function expectSameRefreshAs(world: World, v: number, as: number): void {
  const accepted = world.accepted[v]
  if (accepted === undefined || (accepted.copied === 'deep spread' && as !== v)) return
  const context = world.context(as)
  expectSame(
    attempt(() => world.sp.refreshContext(accepted.mine, context)),
    attempt(() => world.ref.refreshContext(accepted.theirs, context)),
    `refreshing the accepted result of ${viewName(v)} for ${viewName(as)}`,
  )
}
