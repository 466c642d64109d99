import { describe, expect, test } from 'vitest'
import { bindScopeParent, scopeChainOf, scopeParentOf } from '../../src/index.js'
import { signal } from '@preact/signals-core'
import { isScopeWithin, watchParentChanges } from '../../src/scope/parent-chain.js'
import { counted } from '../assembly/counted.js'

/** A counter that every parent re-link bumps (what a registry watches). */
function watched(): { readonly value: number } {
  const revision = signal(0)
  watchParentChanges(revision)
  return revision
}

describe('bindScopeParent', () => {
  test('links a key to its parent', () => {
    const preset = { name: 'preset' }
    const agent = { name: 'agent' }
    bindScopeParent(agent, preset)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('a key stays bound after its binding unlinks it', () => {
    const agent = {}
    bindScopeParent(agent, {}).rebind(undefined)
    expect(scopeParentOf(agent)).toBeUndefined()
    expect(() => bindScopeParent(agent, {})).toThrow(/already bound/)
  })

  test('throws "already bound" on a second bind of the same key', () => {
    const agent = { name: 'agent' }
    bindScopeParent(agent, {})
    expect(() => bindScopeParent(agent, {})).toThrow(/"agent" is already bound/)
  })

  test('throws "already bound" even when the second bind names the same parent', () => {
    const agent = {}
    const preset = {}
    bindScopeParent(agent, preset)
    expect(() => bindScopeParent(agent, preset)).toThrow(/already bound/)
  })

  test('a rejected second bind keeps the first parent', () => {
    const agent = {}
    const preset = {}
    bindScopeParent(agent, preset)
    expect(() => bindScopeParent(agent, {})).toThrow(/already bound/)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('throws "cycle" when a key is bound to itself', () => {
    const agent = { name: 'agent' }
    expect(() => bindScopeParent(agent, agent)).toThrow(/cycle/)
  })

  test('throws "cycle" when the parent descends from the key', () => {
    const root = { name: 'root' }
    const middle = { name: 'middle' }
    const leaf = { name: 'leaf' }
    bindScopeParent(middle, root)
    bindScopeParent(leaf, middle)
    expect(() => bindScopeParent(root, leaf)).toThrow(/cycle/)
  })

  test('names the cycle path in the error', () => {
    const root = { name: 'root' }
    const leaf = { name: 'leaf' }
    bindScopeParent(leaf, root)
    expect(() => bindScopeParent(root, leaf)).toThrow('("root" → "leaf" → "root")')
  })

  test('a bind rejected for a cycle leaves the key unbound', () => {
    const agent = {}
    expect(() => bindScopeParent(agent, agent)).toThrow(/cycle/)
    expect(scopeParentOf(agent)).toBeUndefined()
  })

  test('a key rejected for a cycle can still be bound to a valid parent', () => {
    const agent = {}
    const preset = {}
    expect(() => bindScopeParent(agent, agent)).toThrow(/cycle/)
    bindScopeParent(agent, preset)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('a bind rejected as already bound notifies no parent watcher', () => {
    const agent = {}
    bindScopeParent(agent, {})
    const revision = watched()
    const before = revision.value
    expect(() => bindScopeParent(agent, {})).toThrow(/already bound/)
    expect(revision.value).toBe(before)
  })

  test('a bind rejected for a cycle notifies no parent watcher', () => {
    const agent = {}
    const revision = watched()
    const before = revision.value
    expect(() => bindScopeParent(agent, agent)).toThrow(/cycle/)
    expect(revision.value).toBe(before)
  })

  test('a successful bind notifies parent watchers', () => {
    const revision = watched()
    const before = revision.value
    bindScopeParent({}, {})
    expect(revision.value).not.toBe(before)
  })

  test('throws a TypeError for a non-object key', () => {
    expect(() => bindScopeParent('agent' as unknown as object, {})).toThrow(TypeError)
  })

  test('throws a TypeError for a non-object parent', () => {
    expect(() => bindScopeParent({}, 42 as unknown as object)).toThrow(TypeError)
  })

  test('a bad key or parent is described, never printed as source', () => {
    expect(() => bindScopeParent('agent' as never, {})).toThrowError(
      'bindScopeParent() key must be a scope key object (got string "agent")',
    )
    expect(() => bindScopeParent({ name: 'agent' }, 42 as never)).toThrowError(
      'scope "agent" parent must be a scope key object (got number 42)',
    )
  })

  test('refuses an undefined parent with a TypeError and leaves the key unbound', () => {
    const agent = { name: 'agent' }
    expect(() => bindScopeParent(agent, undefined as never)).toThrowError(
      new TypeError('scope "agent" parent must be a scope key object (got undefined)'),
    )
    const preset = {}
    bindScopeParent(agent, preset)
    expect(scopeParentOf(agent)).toBe(preset)
  })

  test('links classes and functions like any other key', () => {
    class Preset {}
    const agent = () => 'run'
    const child = {}
    bindScopeParent(agent, Preset)
    bindScopeParent(child, agent)
    expect(scopeChainOf(child)).toEqual([child, agent, Preset])
    expect(isScopeWithin(child, Preset)).toBe(true)
  })
})

describe('ScopeParentBinding.rebind', () => {
  test('re-links the key to another parent', () => {
    const agent = {}
    const other = {}
    const binding = bindScopeParent(agent, {})
    binding.rebind(other)
    expect(scopeParentOf(agent)).toBe(other)
  })

  test('unlinks the key with undefined', () => {
    const agent = {}
    const binding = bindScopeParent(agent, {})
    binding.rebind(undefined)
    expect(scopeParentOf(agent)).toBeUndefined()
    expect(scopeChainOf(agent)).toEqual([agent])
  })

  test('an unlinked key stays bound (only the binding may re-link it)', () => {
    const agent = {}
    const binding = bindScopeParent(agent, {})
    binding.rebind(undefined)
    expect(() => bindScopeParent(agent, {})).toThrow(/already bound/)
  })

  test('throws "cycle" when rebinding a key to itself', () => {
    const agent = {}
    const binding = bindScopeParent(agent, {})
    expect(() => binding.rebind(agent)).toThrow(/cycle/)
  })

  test('throws "cycle" when rebinding a key under its own descendant', () => {
    const root = {}
    const leaf = {}
    const rootBinding = bindScopeParent(root, {})
    bindScopeParent(leaf, root)
    expect(() => rootBinding.rebind(leaf)).toThrow(/cycle/)
  })

  test('a rebind rejected for a cycle keeps the previous parent', () => {
    const root = {}
    const preset = {}
    const leaf = {}
    const rootBinding = bindScopeParent(root, preset)
    bindScopeParent(leaf, root)
    expect(() => rootBinding.rebind(leaf)).toThrow(/cycle/)
    expect(scopeChainOf(leaf)).toEqual([leaf, root, preset])
  })

  test('a key whose children all moved away may take one of them as its parent', () => {
    const root = {}
    const leaf = {}
    const rootBinding = bindScopeParent(root, {})
    const leafBinding = bindScopeParent(leaf, root)
    leafBinding.rebind({})
    rootBinding.rebind(leaf)
    expect(scopeChainOf(root)[1]).toBe(leaf)
  })

  test('a key keeps refusing a descendant as parent while any child still links to it', () => {
    const root = {}
    const moved = {}
    const kept = {}
    const grandchild = {}
    const rootBinding = bindScopeParent(root, {})
    const movedBinding = bindScopeParent(moved, root)
    bindScopeParent(kept, root)
    bindScopeParent(grandchild, kept)
    movedBinding.rebind(undefined)
    expect(() => rootBinding.rebind(grandchild)).toThrow(/cycle/)
    expect(scopeParentOf(kept)).toBe(root)
  })

  test('a chain bound downwards (each new key under the last) still refuses a cycle at its end', () => {
    const keys: object[] = [{}]
    for (let i = 1; i < 1_000; i++) {
      keys.push({})
      bindScopeParent(keys[i]!, keys[i - 1]!)
    }
    expect(() => bindScopeParent(keys[0]!, keys[999]!)).toThrow(/cycle/)
    expect(scopeParentOf(keys[0]!)).toBeUndefined()
  })

  test('a rebind to the current parent notifies no parent watcher', () => {
    const agent = {}
    const preset = {}
    const binding = bindScopeParent(agent, preset)
    const revision = watched()
    const before = revision.value
    binding.rebind(preset)
    expect(revision.value).toBe(before)
  })

  test('a rebind to another parent notifies parent watchers', () => {
    const agent = {}
    const binding = bindScopeParent(agent, {})
    const revision = watched()
    const before = revision.value
    binding.rebind({})
    expect(revision.value).not.toBe(before)
  })
})

describe('scopeChainOf', () => {
  test('is empty for undefined', () => {
    expect(scopeChainOf(undefined)).toEqual([])
  })

  test('is the key alone for an unbound key', () => {
    const agent = {}
    expect(scopeChainOf(agent)).toEqual([agent])
  })

  test('throws a TypeError naming the argument for a key that is neither an object nor a function', () => {
    expect(() => scopeChainOf(null as never)).toThrowError(
      new TypeError('scopeChainOf() key must be a scope key object (got null)'),
    )
    expect(() => scopeChainOf('agent' as never)).toThrowError(
      'scopeChainOf() key must be a scope key object (got string "agent")',
    )
  })

  test('lists the key and its ancestors nearest first', () => {
    const root = {}
    const preset = {}
    const agent = {}
    bindScopeParent(preset, root)
    bindScopeParent(agent, preset)
    expect(scopeChainOf(agent)).toEqual([agent, preset, root])
  })

  test('follows a rebind of an ancestor', () => {
    const root = {}
    const other = {}
    const preset = {}
    const agent = {}
    const presetBinding = bindScopeParent(preset, root)
    bindScopeParent(agent, preset)
    presetBinding.rebind(other)
    expect(scopeChainOf(agent)).toEqual([agent, preset, other])
  })
})

describe('scopeParentOf', () => {
  test('is undefined for an unbound key', () => {
    expect(scopeParentOf({})).toBeUndefined()
  })

  test('throws a TypeError naming the argument for a key that is neither an object nor a function', () => {
    expect(() => scopeParentOf(undefined as never)).toThrowError(
      new TypeError('scopeParentOf() key must be a scope key object (got undefined)'),
    )
    expect(() => scopeParentOf('agent' as never)).toThrowError(
      'scopeParentOf() key must be a scope key object (got string "agent")',
    )
  })
})

describe('isScopeWithin', () => {
  test('a key is within itself', () => {
    const agent = {}
    expect(isScopeWithin(agent, agent)).toBe(true)
  })

  test('a key is within each of its ancestors', () => {
    const root = {}
    const preset = {}
    const agent = {}
    bindScopeParent(preset, root)
    bindScopeParent(agent, preset)
    expect([isScopeWithin(agent, preset), isScopeWithin(agent, root)]).toEqual([true, true])
  })

  test('a key is not within its descendant', () => {
    const preset = {}
    const agent = {}
    bindScopeParent(agent, preset)
    expect(isScopeWithin(preset, agent)).toBe(false)
  })

  test('a key is not within its sibling', () => {
    const preset = {}
    const first = {}
    const second = {}
    bindScopeParent(first, preset)
    bindScopeParent(second, preset)
    expect(isScopeWithin(first, second)).toBe(false)
  })

  test('never subscribes (a computed over it ignores a rebind)', () => {
    const agent = {}
    const preset = {}
    const binding = bindScopeParent(agent, preset)
    const view = counted(() => isScopeWithin(agent, preset))
    expect(view.value).toBe(true)
    binding.rebind(undefined)
    expect(view.value).toBe(true)
    expect(view.runs).toBe(1)
  })
})

describe('parent relation reactivity', () => {
  test('a computed over scopeChainOf recomputes after a rebind of the key', () => {
    const agent = {}
    const preset = {}
    const other = {}
    const binding = bindScopeParent(agent, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset])
    binding.rebind(other)
    expect(view.value).toEqual([agent, other])
    expect(view.runs).toBe(2)
  })

  test('a computed over scopeChainOf recomputes after a rebind of an ancestor', () => {
    const root = {}
    const other = {}
    const preset = {}
    const agent = {}
    const presetBinding = bindScopeParent(preset, root)
    bindScopeParent(agent, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset, root])
    presetBinding.rebind(other)
    expect(view.value).toEqual([agent, preset, other])
    expect(view.runs).toBe(2)
  })

  test('a computed over scopeChainOf recomputes when its farthest ancestor gets bound', () => {
    const preset = {}
    const agent = {}
    const root = {}
    bindScopeParent(agent, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset])
    bindScopeParent(preset, root)
    expect(view.value).toEqual([agent, preset, root])
  })

  test('a computed over scopeChainOf recomputes when an unbound key gets bound', () => {
    const agent = {}
    const preset = {}
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent])
    bindScopeParent(agent, preset)
    expect(view.value).toEqual([agent, preset])
  })

  test('a computed over scopeChainOf does not recompute after a sibling is rebound', () => {
    const preset = {}
    const agent = {}
    const sibling = {}
    bindScopeParent(agent, preset)
    const siblingBinding = bindScopeParent(sibling, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset])
    siblingBinding.rebind({})
    expect(view.value).toEqual([agent, preset])
    expect(view.runs).toBe(1)
  })

  test('a computed over scopeChainOf does not recompute after a descendant is bound', () => {
    const agent = {}
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent])
    bindScopeParent({}, agent)
    expect(view.value).toEqual([agent])
    expect(view.runs).toBe(1)
  })

  test('a computed over scopeChainOf does not recompute after a rebind to the same parent', () => {
    const agent = {}
    const preset = {}
    const binding = bindScopeParent(agent, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset])
    binding.rebind(preset)
    expect(view.value).toEqual([agent, preset])
    expect(view.runs).toBe(1)
  })

  test('a computed over scopeChainOf does not recompute after a rejected rebind', () => {
    const agent = {}
    const preset = {}
    const binding = bindScopeParent(agent, preset)
    const view = counted(() => scopeChainOf(agent))
    expect(view.value).toEqual([agent, preset])
    expect(() => binding.rebind(agent)).toThrow(/cycle/)
    expect(view.value).toEqual([agent, preset])
    expect(view.runs).toBe(1)
  })

  test('a computed over scopeParentOf recomputes after a rebind', () => {
    const agent = {}
    const other = {}
    const binding = bindScopeParent(agent, {})
    const view = counted(() => scopeParentOf(agent))
    view.value
    binding.rebind(other)
    expect(view.value).toBe(other)
  })
})
