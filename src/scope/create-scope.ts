import type { Context } from 'cordis'
import { assertBindable, bindScopeParent, scopeParentOf } from './parent-chain.js'
import { assertScopeKey, SCOPE_TAG, scopeLabel, type ScopeKey } from './scope-key.js'
import { untracked } from '@preact/signals-core'

/** A minted scope: its tagged context and the two ways to tear it down. */
export interface Scope {
  /** The minting plugin's child fiber context, tagged with the scope key. */
  readonly ctx: Context
  /** The exact Cordis disposer of the scope's fiber (identity kept for ordered composition); later calls return `undefined`. */
  readonly rawDispose: () => Promise<void> | undefined
  /** Idempotent teardown; concurrent calls share one promise that settles once teardown finished. */
  dispose(): Promise<void>
}

/** Options of `createScope`. */
export interface CreateScopeOptions {
  /** Bound with `bindScopeParent` before the scope is usable. */
  readonly parent?: ScopeKey
}

function scope(): void {}

// The key of each scope fiber, so a registry can release per-scope caches when Cordis disposes the fiber.
const mintedFibers = new WeakMap<object, ScopeKey>()

// Apps whose root already holds the listener below: one per app.
const explaining = new WeakSet<Context>()

/** Explains Cordis' "cannot get property … without inject" error for a scope minted on the root context. */
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
 * Mints a child fiber of `ctx` (a no-op plugin) and returns its context tagged with `key`: what is registered
 * through `scope.ctx` is visible in that scope and retracted when the scope (or `ctx`'s plugin) is disposed.
 * Derived contexts inherit the tag; a nested `createScope` shadows it. Mint from a plugin that injects the
 * services the scope uses (on the root context it reaches none, and the error says so). `options.parent` is
 * bound first: the same parent again is accepted, a different one throws "already bound".
 *
 * @example
 * ```ts
 * import { createScope } from 'promptloom'
 *
 * await app.inject(['systemPrompt'], (ctx) => {
 *   createScope(ctx, agent).ctx.systemPrompt.section({ name: 'workspace', order: 10_000, text: 'Work in /work/agent-1.' })
 * })
 * const prompt = await app.systemPrompt.assemble({ scope: agent }) // the global sections and agent's
 * ```
 */
export function createScope(ctx: Context, key: ScopeKey, options: CreateScopeOptions = {}): Scope {
  assertScopeKey(key, 'createScope() key')
  const { parent } = options
  const bind = parent !== undefined && untracked(() => scopeParentOf(key)) !== parent
  // Check, mint, then bind (its parent again binds nothing): a refused parent mints nothing, a failed mint binds nothing.
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
      // A no-op once the fiber was disposed elsewhere: wait for that teardown instead.
      while (fiber.inertia) await fiber.inertia
    })())
  const scoped = fiber.ctx.extend({ [SCOPE_TAG]: key })
  Object.defineProperty(scoped, Symbol.for('nodejs.util.inspect.custom'), { value: () => `Context <scope ${scopeLabel(key)}>` })
  return { ctx: scoped, rawDispose, dispose }
}
