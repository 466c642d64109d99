/**
 * Every Cordis internal promptloom reads, and nothing else. Contract: cordis@4.0.0-rc.10 (an exact peer
 * dependency), lib/index.js; pinned by test/assembly/cordis-internals.test.ts:
 *
 * 1. `Symbol.for('cordis.original')` read on the `ctx.events` proxy returns the raw `EventsService`.
 * 2. `events._hooks` is a null-prototype table; `_hooks[name]` is the array of hooks `ctx.on(name, …)`
 *    registered (spliced on dispose, deleted once empty). Dispatch resolves callbacks from it only; a
 *    dispatch of a name not starting with `internal/` first emits `internal/dispatch` when that event has
 *    hooks; a listener an `internal/listener` interceptor claims never enters `_hooks`.
 * 3. `events.waterfall(thisArg, name, …args, inner)` is what `ctx.waterfall` calls; with no callback left
 *    after filtering it returns `inner()` itself. `events.dispatch('emit', [name])` (deprecated there)
 *    resolves an event's callbacks as `ctx.emit(name)` would, without calling them.
 * 4. `internal/plugin` is emitted with the fiber when one is created and again when it is disposed, then
 *    with `fiber.uid === null`; `fiber.inertia` is the promise of its pending unload (`undefined` once settled).
 * 5. `Service` keeps `{ associate: name, property: 'ctx' }` under `Service.tracker`; the proxy a
 *    `ctx.<service>` read returns wraps every method it hands out in a shadow context unless
 *    `tracker.noShadow`, and on every string-keyed read consults the root reflect service's `props`
 *    table (raw via point 1; a null-prototype object whose keys are the declared `name.<prop>`) while
 *    `tracker.associate` is set.
 *
 * What they buy: an event nobody can hear is not dispatched (1–3), a throwing change listener is logged
 * at once without stopping the others (3), a disposed scope's views are released while its key lives on
 * (4), and a method read costs one proxy trap (5). When a shape differs at load, the bridge takes the
 * public path (`ctx.waterfall`, `ctx.parallel`) with the same results and listener order; a throwing change
 * listener is then logged a microtask later, and a disposed scope's views go when its key is collected.
 */

import { Service, type Context } from 'cordis'
import { scopeKeyOfFiber } from '../scope/create-scope.js'
import type { ScopeKey } from '../scope/scope-key.js'

const ORIGINAL = Symbol.for('cordis.original')
const DISPATCH_OBSERVER = 'internal/dispatch'

interface RawEvents {
  readonly _hooks: Readonly<Record<string | symbol, unknown>>
  waterfall(thisArg: object, name: string, ...args: unknown[]): unknown
  dispatch(mode: 'emit', args: [name: string]): (() => unknown)[]
}

interface RawFiber {
  readonly uid: number | null
  readonly inertia: Promise<void> | undefined
}

/** One service's way into Cordis' events: through the internals when they fit, else the public API. */
export interface CordisBridge {
  readonly path: 'internal' | 'public'
  /** Whether dispatching `name` could reach a listener or a dispatch observer; always `true` on the public path. */
  mayHear(name: string): boolean
  waterfall(thisArg: object, name: string, ...args: unknown[]): unknown
  /** `ctx.emit(name)`, except that a throwing listener is reported to `failed` and the ones after it still hear it. */
  emit(name: string, failed: (error: unknown) => void): void
}

function rawEventsOf(ctx: Context): RawEvents | undefined {
  const raw = (ctx.events as unknown as Record<symbol, unknown>)[ORIGINAL] as Partial<RawEvents> | undefined
  if (typeof raw !== 'object' || raw === null || typeof raw.waterfall !== 'function' || typeof raw.dispatch !== 'function') return undefined
  const hooks = raw._hooks
  if (typeof hooks !== 'object' || hooks === null || Object.getPrototypeOf(hooks) !== null) return undefined
  return raw as RawEvents
}

function hooked(hooks: RawEvents['_hooks'], name: string | symbol): boolean {
  const list = hooks[name]
  // Not an array: a layout we do not know; count it as a listener (never skip wrongly).
  return list !== undefined && (!Array.isArray(list) || list.length > 0)
}

/** Whether a dispatch of `name` over `hooks` (contract point 2) could reach anyone; filters are not consulted. */
export function hasListeners(hooks: RawEvents['_hooks'], name: string | symbol): boolean {
  const observed = typeof name !== 'string' || !name.startsWith('internal/')
  return hooked(hooks, name) || (observed && hooked(hooks, DISPATCH_OBSERVER))
}

/** The bridge of the app `ctx` belongs to; `publicOnly` takes the public path whatever the shapes. */
export function cordisBridgeOf(ctx: Context, publicOnly = false): CordisBridge {
  const events = publicOnly ? undefined : rawEventsOf(ctx)
  if (events === undefined) {
    const parallel = ctx.parallel as unknown as (name: string) => Promise<void>
    return {
      path: 'public',
      mayHear: () => true,
      waterfall: ctx.waterfall as unknown as CordisBridge['waterfall'],
      // `parallel` calls every listener before it awaits anything, and collects what they throw.
      emit: (name, failed) =>
        void parallel(name).catch((error: unknown) => {
          for (const reason of error instanceof AggregateError ? error.errors : [error]) failed(reason)
        }),
    }
  }
  return {
    path: 'internal',
    mayHear: (name) => hasListeners(events._hooks, name),
    waterfall: (thisArg, name, ...args) => events.waterfall(thisArg, name, ...args),
    emit: (name, failed) => {
      for (const listener of events.dispatch('emit', [name])) {
        try {
          listener()
        } catch (error) {
          failed(error)
        }
      }
    },
  }
}

/**
 * Calls `release(key)` when the fiber of a minted scope is disposed, and again once its unload settled
 * (contract point 4): Cordis reports the disposal before it undoes the fiber's effects, and a listener
 * reacting to those undos may build the scope's view again meanwhile. Does nothing on the public path.
 */
export function releaseOnDispose(ctx: Context, bridge: CordisBridge, release: (key: ScopeKey) => void): void {
  if (bridge.path === 'public' || !('uid' in ctx.fiber)) return
  // Synchronous for every other fiber event: only a minted scope's disposal starts the wait for its unload.
  ctx.on('internal/plugin', (plugin) => {
    const fiber = plugin as unknown as RawFiber
    const key = fiber.uid === null ? scopeKeyOfFiber(plugin) : undefined
    if (key === undefined) return
    release(key)
    void unloaded(fiber).then(() => release(key))
  })
}

/** Settles once `fiber`'s unload did; the unload starts right after the disposal is reported, in the same job. */
async function unloaded(fiber: RawFiber): Promise<void> {
  await undefined
  while (fiber.inertia) await fiber.inertia.catch(() => undefined)
}

/**
 * Hands `service`'s methods out unshadowed, and has Cordis look up an associated property
 * (`ctx.reflect.accessor('<name>.x', …)`) only while one is declared (contract point 5). Leaves the
 * tracker alone on the public path or when its shape differs.
 */
export function lightenTracker(ctx: Context, bridge: CordisBridge, service: object, name: string): void {
  if (bridge.path === 'public') return
  const tracker = (service as Record<symbol, unknown>)[Service.tracker] as { noShadow?: boolean; associate?: unknown } | undefined
  const props = (ctx.reflect as unknown as Record<symbol, { readonly props?: unknown } | undefined>)[ORIGINAL]?.props
  if (typeof tracker !== 'object' || tracker === null || tracker.associate !== name) return
  if (typeof props !== 'object' || props === null || Object.getPrototypeOf(props) !== null) return
  const prefix = `${name}.`
  tracker.noShadow = true
  Object.defineProperty(tracker, 'associate', {
    get: () => {
      for (const key in props) if (key.startsWith(prefix)) return name
      return undefined
    },
    configurable: true,
    enumerable: true,
  })
}
