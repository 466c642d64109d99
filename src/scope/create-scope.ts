import type { Context } from 'cordis'
import { assertBindable, bindScopeParent, isScopeParentBound, scopeParentOf } from './parent-chain.js'
import { SCOPE_TAG, scopeLabel, type ScopeKey } from './scope-key.js'
import { untracked } from '@preact/signals-core'

/** A minted scope: its tagged context and the two ways to tear it down. */
export interface Scope {
  /** The minting plugin's child fiber context, tagged with the scope key. */
  readonly ctx: Context
  /** The exact Cordis disposer of the scope's fiber (keeps its identity for ordered composition). */
  readonly rawDispose: () => Promise<void>
  /** Idempotent teardown; concurrent calls share one promise that settles once teardown finished. */
  dispose(): Promise<void>
}

/** Options of `createScope`. */
export interface CreateScopeOptions {
  /** Bound with `bindScopeParent` before the scope is usable. */
  readonly parent?: ScopeKey
}

// The no-op plugin every scope fiber runs; one shared runtime for all scopes.
function scope(): void {}

// Scope fibers by the key they were minted for, so a registry can release its
// per-scope caches when Cordis reports the fiber disposed.
const mintedFibers = new WeakMap<object, ScopeKey>()

// Apps whose root already holds the listener below: one per app, however many scopes.
const explaining = new WeakSet<Context>()

/**
 * Adds to Cordis' "cannot get property … without inject" error, when the read
 * was made through the context of a scope minted on the root context (which
 * injects nothing, so that context reaches no service), why and how to mint
 * the scope instead. Other reads and other errors pass through untouched.
 */
function explainRootScopes(root: Context): void {
  if (explaining.has(root)) return
  explaining.add(root)
  root.on(
    'internal/get',
    (ctx, name, error, next) => {
      try {
        return next()
      } catch (thrown) {
        const key = thrown === error && error.message === `cannot get property "${name}" without inject` ? mintedFibers.get(ctx.fiber) : undefined
        if (key !== undefined && ctx.fiber.parent.fiber.runtime === null) {
          error.message +=
            `: scope "${scopeLabel(key)}" was minted on the root context, which injects nothing, and a scope's context reaches only the services injected where it was minted; ` +
            `mint it inside app.inject(['${name}'], (ctx) => createScope(ctx, key)), or in a plugin declaring inject: ['${name}']`
        }
        throw thrown
      }
    },
    { global: true },
  )
}

/** The key a scope fiber was minted for by `createScope`, or `undefined` for any other fiber. */
export function scopeKeyOfFiber(fiber: object): ScopeKey | undefined {
  return mintedFibers.get(fiber)
}

/**
 * Mints a child fiber of `ctx` (a no-op plugin) and returns its context
 * extended with the scope tag `key`. Everything registered through
 * `scope.ctx` is visible in that scope and owned by its fiber, so disposing
 * the scope (or unloading `ctx`'s plugin) retracts it all. Contexts derived
 * from `scope.ctx` inherit the tag; a nested `createScope` shadows it.
 *
 * Services reached through `scope.ctx` resolve through the minting plugin, so
 * mint scopes from a plugin that injects the services the scope will use
 * (`app.inject(['systemPrompt'], (ctx) => createScope(ctx, key))`). Reading
 * one the scope cannot reach throws Cordis' "cannot get property … without
 * inject" error; for a scope minted on the root context (`createScope(app,
 * key)`, which reaches no service) the error names the scope and this remedy.
 *
 * With `options.parent`, the parent link is bound first. A key that is already
 * bound to that same parent (a scope minted again for the same agent) is
 * accepted; a different existing parent throws "already bound".
 *
 * @example
 * ```ts
 * import { Context } from 'cordis'
 * import { createScope, SystemPrompt } from 'promptloom'
 *
 * const app = new Context()
 * await app.plugin(SystemPrompt)
 * const agent = { name: 'agent-1' } // the scope key: any object, compared by reference
 * await app.inject(['systemPrompt'], (ctx) => {
 *   const scope = createScope(ctx, agent)
 *   scope.ctx.systemPrompt.section({ name: 'workspace', order: 10_000, text: 'Work in /work/agent-1.' })
 * })
 * const assembly = await app.systemPrompt.assemble({ scope: agent }) // the global sections and agent-1's
 * ```
 */
export function createScope(ctx: Context, key: ScopeKey, options: CreateScopeOptions = {}): Scope {
  if (typeof key !== 'object' || key === null) {
    throw new TypeError(`scope key must be an object (got ${String(key)})`)
  }
  const { parent } = options
  const bind =
    parent !== undefined && !(isScopeParentBound(key) && untracked(() => scopeParentOf(key)) === parent)
  // Check first, mint, then bind: a refused parent mints nothing, and a mint
  // that throws (an inactive context) binds nothing.
  if (bind) assertBindable(key, parent)
  if (ctx.fiber.runtime === null) explainRootScopes(ctx.root)
  const fiber = ctx.plugin(scope)
  if (bind) bindScopeParent(key, parent)
  mintedFibers.set(fiber.ctx.fiber, key)
  const rawDispose = fiber.dispose
  let teardown: Promise<void> | undefined
  const dispose = (): Promise<void> =>
    (teardown ??= (async () => {
      await rawDispose()
      // rawDispose is a no-op once the fiber was disposed elsewhere (e.g. by
      // `rawDispose` or its parent unloading): wait for that teardown instead.
      while (fiber.inertia) await fiber.inertia
    })())
  const scoped = fiber.ctx.extend({ [SCOPE_TAG]: key })
  Object.defineProperty(scoped, Symbol.for('nodejs.util.inspect.custom'), {
    value: () => `Context <scope ${scopeLabel(key)}>`,
  })
  return { ctx: scoped, rawDispose, dispose }
}
