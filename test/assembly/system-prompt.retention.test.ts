import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { isCollected } from '../reliability/collect.js'
import { bindScopeParent, createScope, renderContextSnapshot, renderPrompt } from '../../src/index.js'
import { BARE, mount, tool } from './system-prompt.fixtures.js'

// SPEC §2 Reliability: "Nothing is retained for a disposed scope or an
// unreachable scope key". Proven with a WeakRef to the key and a forced GC.
const collected = (ref: WeakRef<object>): Promise<boolean> => isCollected(ref, 30)

/** A root app plus a long-lived minting context (the closure of a minting callback must not hold the keys). */
async function setup(): Promise<{ app: Context; minter: Context }> {
  const app = await mount(BARE)
  let minter!: Context
  await app.inject(['systemPrompt'], (ctx) => {
    minter = ctx
  })
  return { app, minter }
}

describe('retention', () => {
  test('a key that only ever went through WeakRef is collected (control)', async () => {
    const ref = new WeakRef({ name: 'control' })
    expect(await collected(ref)).toBe(true)
  })

  test('a disposed scope’s key is collected after registrations, listeners, assemblies and renders', async () => {
    const { app, minter } = await setup()
    const preset = { name: 'preset' }
    const text = signal('S')
    const ref = await (async () => {
      const key = { name: 'agent' }
      const scope = createScope(minter, key, { parent: preset })
      const sp = scope.ctx.systemPrompt
      sp.section({ name: 's', order: 0, text })
      sp.context({ name: 'c', order: 0, text: 'cwd {{cwd}}' })
      sp.variable('cwd', () => '/work')
      sp.tools(() => ({ schemas: [tool('bash')] }))
      sp.suppressRuntimeContext()
      scope.ctx.on('system-prompt/assemble', async (_presentation, _context, next) => next())
      const assembly = await app.systemPrompt.assemble({ scope: key })
      renderPrompt(assembly)
      renderContextSnapshot(assembly)
      app.systemPrompt.refreshContext(assembly, { scope: key })
      app.systemPrompt.inspect(key)
      await scope.dispose()
      return new WeakRef(key)
    })()
    text.value = 'written after the disposal'
    await app.systemPrompt.assemble({ scope: preset })
    expect(await collected(ref)).toBe(true)
  })

  test('an unreachable key that was only assembled and inspected is collected', async () => {
    const { app } = await setup()
    const ref = await (async () => {
      const key = { name: 'ghost' }
      bindScopeParent(key, { name: 'parent' })
      renderPrompt(await app.systemPrompt.assemble({ scope: key }))
      app.systemPrompt.inspect(key)
      return new WeakRef(key)
    })()
    expect(await collected(ref)).toBe(true)
  })

  test('a live scope’s key is retained (the check can fail)', async () => {
    const { minter } = await setup()
    const scope = await (async () => {
      const key = { name: 'live' }
      const scope = createScope(minter, key)
      scope.ctx.systemPrompt.section({ name: 's', order: 0, text: 'S' })
      return { scope, ref: new WeakRef(key) }
    })()
    expect(await collected(scope.ref)).toBe(false)
    await scope.scope.dispose()
  })

  test('an app nobody disposed but nobody references is collected (parent re-links hold registries weakly)', async () => {
    const ref = await (async () => {
      const app = await mount(BARE)
      app.systemPrompt.section({ name: 'intro', order: 0, text: 'Hello.' })
      renderPrompt(await app.systemPrompt.assemble())
      return new WeakRef(app)
    })()
    // A re-link anywhere must not reach (or keep) the dropped registry.
    bindScopeParent({ name: 'child' }, { name: 'parent' })
    expect(await collected(ref)).toBe(true)
  })
})
