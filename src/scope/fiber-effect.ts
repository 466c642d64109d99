import type { Context } from 'cordis'

/**
 * The Cordis effect every registration is, started for about half of what
 * `ctx.effect(...)` costs, with the same effect, meta, label, disposer and
 * lifetime. Of a plain `ctx.effect` call, most of the time goes to three
 * `new Error()`s whose stack V8 captures at once: one for the `ctx.effect`
 * read itself (a reflect accessor), one in `buildOuterStack` and one in
 * `composeError`. This module skips the first and leaves the other two with
 * empty stacks.
 *
 * The Cordis contract relied on (cordis@4.0.0-rc.10, lib/index.js; pinned by
 * test/scope/fiber-effect.test.ts):
 *
 * 1. `ctx.effect` is the reflect mixin of `fiber.effect` (ReflectService's
 *    constructor: `this.mixin('fiber', ['runtime', 'effect'])`): reading it
 *    returns `ctx.fiber.effect` bound to `ctx.fiber` (a context read outside an
 *    associated property has no receiver), and `ctx.fiber` is the raw fiber
 *    (a Fiber has no tracker). So `ctx.fiber.effect(execute, label)` is the
 *    same call.
 * 2. `fiber.effect` runs `execute` synchronously, inside `composeError`; the
 *    two errors it creates (`buildOuterStack`'s outer error, `composeError`'s
 *    `info.error`) are read only when `execute` throws (or, for an async
 *    effect, rejects): their stacks decorate that error. With an empty
 *    `info.error` stack the decoration finds no anchor line and rethrows the
 *    error exactly as thrown, with its own, complete stack.
 *
 * Nothing but Cordis' bookkeeping runs between the call and `execute`, and
 * `execute` restores `Error.stackTraceLimit` before it does anything, so no
 * other error is ever created with the limit lowered. When `fiber.effect`
 * throws before `execute` ran (an inactive fiber), the limit is restored and
 * the plain call is made again, so that error keeps its stack too.
 */

/**
 * Starts `execute` (synchronous; it returns its cleanup) as a Cordis effect of
 * `ctx`'s fiber labelled `label`, exactly as `ctx.effect(execute, label)`
 * would, and returns Cordis' own disposer. An error thrown by `execute` reaches
 * the caller as thrown (its stack undecorated by Cordis).
 */
export function fiberEffect(ctx: Context, execute: () => () => void, label: string): () => Promise<void> {
  const fiber = ctx.fiber
  const limit = Error.stackTraceLimit
  let started = false
  try {
    Error.stackTraceLimit = 0
  } catch {
    // A frozen `Error` (a hardened realm): the plain call, stacks and all.
    return fiber.effect(execute, label)
  }
  try {
    return fiber.effect(() => {
      Error.stackTraceLimit = limit
      started = true
      return execute()
    }, label)
  } catch (error) {
    if (started) throw error
    Error.stackTraceLimit = limit
    return fiber.effect(execute, label)
  } finally {
    Error.stackTraceLimit = limit
  }
}
