/**
 * How Cordis hands the `systemPrompt` service to a caller, tuned so that a
 * method read (`ctx.systemPrompt.assemble`) costs one proxy trap and no
 * more. Every `ctx.systemPrompt` read gives the caller a traceable proxy over
 * the service, built from the tracker object `Service` defines on it; this
 * module adjusts that tracker.
 *
 * The Cordis contract relied on (cordis@4.0.0-rc.10, lib/index.js
 * `createTraceable`; pinned by test/assembly/tracker.test.ts):
 *
 * 1. The traceable's `get` trap answers `tracker.property` (`'ctx'`) with the
 *    caller's context, so a registration method's `this.ctx` is its caller.
 * 2. Without `tracker.noShadow`, it wraps every method it hands out in a
 *    shadow: a context extended with the service plugin's (two proxies and an
 *    `extend` per read), so that the method's `this.ctx.<service>` resolves
 *    from the plugin. With it, methods are handed out as they are.
 * 3. It reads `tracker.associate` on every string-keyed `get` and `set`; when
 *    set, it reads `useSite.reflect.props[`${associate}.${prop}`]` first, and
 *    `useSite.reflect` is itself a proxied read that builds a traceable of
 *    the reflect service (about as costly as the whole method call that
 *    follows). A declared associated property (`ctx.reflect.accessor`,
 *    `ctx.provide` or `ctx.mixin` of a `systemPrompt.<name>`) is then read
 *    through the context instead of the service.
 * 4. Associated properties are exactly the keys of the root reflect
 *    service's `props` table starting with `systemPrompt.`; that table is one
 *    null-prototype object for the life of the root, and declaring or
 *    withdrawing one only adds or deletes its key.
 */

/** The part of the tracker Cordis' `Service` defines that this module adjusts. */
interface ServiceTracker {
  noShadow?: boolean
  associate?: string
}

/**
 * Adjusts the tracker of `service` (Cordis' `Service.tracker` symbol on it):
 * methods are handed out unshadowed (no method of the service reads a
 * service through `this.ctx`: the registration methods need only the
 * caller's context, its scope and fiber, which the unshadowed `this.ctx`
 * is), and `associate` answers `name` only while some associated property
 * `name.<prop>` is declared in `props` (the root reflect service's table),
 * else `undefined`, so the common read skips building the reflect traceable
 * of contract point 3. Behaviour is unchanged either way: with no associated
 * property declared, Cordis' lookup would have found nothing.
 */
export function lightenTracker(service: object, trackerKey: symbol, name: string, props: object): void {
  const tracker = (service as Record<symbol, ServiceTracker | undefined>)[trackerKey]
  if (tracker === undefined) throw new Error(`the "${name}" service has no Cordis tracker; a Cordis upgrade changed Service, so check src/assembly/tracker.ts against it`)
  tracker.noShadow = true
  const prefix = `${name}.`
  Object.defineProperty(tracker, 'associate', {
    get: () => (hasKeyWithPrefix(props, prefix) ? name : undefined),
    configurable: true,
    enumerable: true,
  })
}

/** Whether `table` has an own key starting with `prefix`. */
function hasKeyWithPrefix(table: object, prefix: string): boolean {
  for (const key of Object.keys(table)) if (key.startsWith(prefix)) return true
  return false
}
