import { batch, effect, signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, expectTypeOf, test } from 'vitest'
import {
  NamedEntries,
  ScopedLayers,
  bindScopeParent,
  createScope,
  type LayerEffectOptions,
  type ScopeKey,
  type ScopeLayer,
} from '../../src/index.js'
import { counted } from '../assembly/counted.js'

interface TestLayer extends ScopeLayer {
  /** The key the layer was created for (`undefined` for the global layer). */
  readonly scope: ScopeKey | undefined
  readonly named: NamedEntries<string>
}

/** A ScopedLayers of named string entries, recording every layer it creates. */
function layered(onChange?: () => void) {
  const created: (ScopeKey | undefined)[] = []
  const layers = new ScopedLayers<TestLayer>((scope) => {
    created.push(scope)
    const named = new NamedEntries<string>(
      (name) => new Error(`entry "${name}" is already registered in this scope`),
    )
    return { scope, named, isEmpty: () => named.isEmpty() }
  }, onChange)
  const register = (
    ctx: Context,
    name: string,
    value: string,
    options: Partial<LayerEffectOptions> = {},
  ): (() => unknown) =>
    layers.effect(ctx, (layer) => layer.named.insert(name, value), {
      label: 'test.register()',
      ...options,
    })
  const merged = (scope: ScopeKey | undefined): [string, string][] => [
    ...layers.merge(scope, (layer) => layer.named),
  ]
  return { layers, created, register, merged }
}

/** The disposers a context's fiber currently holds (Cordis effect wrappers). */
function heldDisposers(ctx: Context): unknown[] {
  return [...ctx.fiber._disposables]
}

/** Labels of the effects a context's fiber currently holds. */
function effectLabels(ctx: Context): string[] {
  return ctx.fiber.getEffects().map((meta) => meta.label)
}

/** A root context plus minted scopes for `preset ← agent` and its sibling `other`. */
function family() {
  const app = new Context()
  const preset = { name: 'preset' }
  const agent = { name: 'agent' }
  const sibling = { name: 'sibling' }
  bindScopeParent(agent, preset)
  bindScopeParent(sibling, preset)
  return {
    app,
    preset,
    agent,
    sibling,
    presetScope: createScope(app, preset),
    agentScope: createScope(app, agent),
    siblingScope: createScope(app, sibling),
  }
}

describe('ScopedLayers.global', () => {
  test('is created eagerly with scope undefined', () => {
    const { layers, created } = layered()
    expect(created).toEqual([undefined])
    expect(layers.global.scope).toBeUndefined()
  })


  test('is never reclaimed when its last entry is undone', () => {
    const { layers, register } = layered()
    const global = layers.global
    register(new Context(), 'a', 'A')()
    register(new Context(), 'b', 'B')
    expect([layers.global, [...global.named.keys()]]).toEqual([global, ['b']])
  })
})

describe('ScopedLayers.peek', () => {
  test('is undefined for undefined (no scope has no overlay; the global layer is `global`)', () => {
    const { layers, register } = layered()
    register(new Context(), 'a', 'A')
    expect(layers.peek(undefined)).toBeUndefined()
  })

  test('is undefined for a scope without a layer', () => {
    const { layers } = layered()
    expect(layers.peek({})).toBeUndefined()
  })

  test('never creates a layer', () => {
    const { layers, created } = layered()
    layers.peek({})
    expect(created).toEqual([undefined])
  })

  test("ignores the chain (a child does not see its parent's layer)", () => {
    const { preset, agent, presetScope } = family()
    const { layers, register } = layered()
    register(presetScope.ctx, 'a', 'A')
    expect(layers.peek(preset)).toBeDefined()
    expect(layers.peek(agent)).toBeUndefined()
  })

  test("returns the exact layer created for the scope", () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    expect(layers.peek(agent)?.scope).toBe(agent)
  })
})

describe('ScopedLayers.effect placement', () => {
  test('a registration through an unscoped context lands in the global layer', () => {
    const { layers, created, register } = layered()
    register(new Context(), 'a', 'A')
    expect([...layers.global.named.entries()]).toEqual([['a', 'A']])
    expect(created).toEqual([undefined])
  })

  test("a registration through scope.ctx lazily creates that scope's exact layer", () => {
    const { agent, agentScope } = family()
    const { layers, created, register } = layered()
    expect(created).toEqual([undefined])
    register(agentScope.ctx, 'a', 'A')
    expect(created).toEqual([undefined, agent])
    expect([...(layers.peek(agent)?.named.entries() ?? [])]).toEqual([['a', 'A']])
  })

  test('a registration through scope.ctx leaves the global layer alone', () => {
    const { agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    expect(layers.global.isEmpty()).toBe(true)
  })

  test("a registration through scope.ctx does not create the parent's layer", () => {
    const { preset, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    expect(layers.peek(preset)).toBeUndefined()
  })

  test("a second registration in a scope reuses the scope's layer", () => {
    const { agent, agentScope } = family()
    const { layers, created, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const layer = layers.peek(agent)
    register(agentScope.ctx, 'b', 'B')
    expect(layers.peek(agent)).toBe(layer)
    expect(created).toEqual([undefined, agent])
  })

  test("two scopes minted for the same key share the key's layer", () => {
    const key = {}
    const app = new Context()
    const { layers, register } = layered()
    register(createScope(app, key).ctx, 'a', 'A')
    register(createScope(app, key).ctx, 'b', 'B')
    expect([...(layers.peek(key)?.named.keys() ?? [])]).toEqual(['a', 'b'])
  })

  test("a registration through a context derived with extend() lands in the scope's layer", () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx.extend(), 'a', 'A')
    expect([...(layers.peek(agent)?.named.keys() ?? [])]).toEqual(['a'])
  })

  test("a registration through a plugin loaded under scope.ctx lands in the scope's layer", async () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    await agentScope.ctx.plugin((ctx: Context) => {
      register(ctx, 'a', 'A')
    })
    expect([...(layers.peek(agent)?.named.keys() ?? [])]).toEqual(['a'])
  })

  test("a registration through a nested scope lands in the inner scope's layer only", () => {
    const outerKey = {}
    const innerKey = {}
    const outer = createScope(new Context(), outerKey)
    const inner = createScope(outer.ctx, innerKey)
    const { layers, register } = layered()
    register(inner.ctx, 'a', 'A')
    expect([...(layers.peek(innerKey)?.named.keys() ?? [])]).toEqual(['a'])
    expect(layers.peek(outerKey)).toBeUndefined()
  })
})

describe('ScopedLayers.effect ownership', () => {
  test('returns the exact disposer the fiber holds (no wrapper)', () => {
    const { agentScope } = family()
    const { register } = layered()
    const before = heldDisposers(agentScope.ctx)
    const dispose = register(agentScope.ctx, 'a', 'A')
    expect(heldDisposers(agentScope.ctx)).toEqual([...before, dispose])
  })

  test('returns a disposer typed as what it returns: Cordis\' returns undefined, and awaiting it works', async () => {
    const { agent, agentScope } = family()
    const { layers, merged } = layered()
    const dispose = layers.effect(agentScope.ctx, (layer) => layer.named.insert('a', 'A'), { label: 'test.register()' })
    expectTypeOf(dispose).toEqualTypeOf<() => Promise<void> | undefined>()
    const result = dispose()
    expect(result).toBeUndefined()
    await result
    expect(merged(agent)).toEqual([])
  })

  test('returns a disposer that carries the Cordis effect meta with the label', () => {
    const { agentScope } = family()
    const { register } = layered()
    const dispose = register(agentScope.ctx, 'a', 'A', { label: 'systemPrompt.section()' })
    const meta = (dispose as unknown as Record<symbol, { label: string }>)[Context.effect]
    expect(meta?.label).toBe('systemPrompt.section()')
    expect(agentScope.ctx.fiber.getEffects()).toContain(meta)
  })

  test('labels the Cordis effect with options.label', () => {
    const { agentScope } = family()
    const { register } = layered()
    register(agentScope.ctx, 'a', 'A', { label: 'systemPrompt.section()' })
    expect(effectLabels(agentScope.ctx)).toEqual(['systemPrompt.section()'])
  })

  test('calling the disposer runs the undo', () => {
    const { agent, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'keep', 'K')
    const dispose = register(agentScope.ctx, 'a', 'A')
    dispose()
    expect(merged(agent)).toEqual([['keep', 'K']])
  })

  test('calling the disposer releases the effect from the fiber', () => {
    const { agentScope } = family()
    const { register } = layered()
    register(agentScope.ctx, 'a', 'A')()
    expect(effectLabels(agentScope.ctx)).toEqual([])
  })

  test('calling the disposer twice is harmless', () => {
    const { agent, agentScope } = family()
    const { merged, register } = layered()
    const dispose = register(agentScope.ctx, 'a', 'A')
    dispose()
    register(agentScope.ctx, 'a', 'again')
    dispose()
    expect(merged(agent)).toEqual([['a', 'again']])
  })

  test("disposing the scope undoes the registrations made through its ctx", async () => {
    const { agent, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(agentScope.ctx, 'b', 'B')
    await agentScope.dispose()
    expect(merged(agent)).toEqual([])
  })

  test('disposing the scope through rawDispose undoes its registrations', async () => {
    const { agent, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    await agentScope.rawDispose()
    expect(merged(agent)).toEqual([])
  })

  test("disposing one scope leaves another scope's registrations", async () => {
    const { agent, sibling, agentScope, siblingScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(siblingScope.ctx, 's', 'S')
    await agentScope.dispose()
    expect([merged(agent), merged(sibling)]).toEqual([[], [['s', 'S']]])
  })

  test('visibility and ownership come from the same ctx (a nested scope owns and sees its own registration)', async () => {
    const outerKey = {}
    const innerKey = {}
    const outer = createScope(new Context(), outerKey)
    const inner = createScope(outer.ctx, innerKey)
    const { layers, register } = layered()
    register(inner.ctx, 'a', 'A')
    register(outer.ctx, 'o', 'O')
    await inner.dispose()
    expect(layers.peek(innerKey)).toBeUndefined()
    expect([...(layers.peek(outerKey)?.named.keys() ?? [])]).toEqual(['o'])
  })
})

describe('ScopedLayers.effect failures', () => {
  test('rethrows the error of an action that throws', () => {
    const { agentScope } = family()
    const { layers } = layered()
    expect(() =>
      layers.effect(
        agentScope.ctx,
        () => {
          throw new Error('provider "x" is invalid')
        },
        { label: 'test.fail()' },
      ),
    ).toThrow('provider "x" is invalid')
  })

  test('an action that throws leaves no layer behind', () => {
    const { agent, agentScope } = family()
    const { layers } = layered()
    expect(() =>
      layers.effect(
        agentScope.ctx,
        () => {
          throw new Error('boom')
        },
        { label: 'test.fail()' },
      ),
    ).toThrow('boom')
    expect(layers.peek(agent)).toBeUndefined()
  })

  test('an action that throws does not call onChange', () => {
    const { agentScope } = family()
    const changes: string[] = []
    const { layers } = layered(() => changes.push('change'))
    expect(() =>
      layers.effect(
        agentScope.ctx,
        () => {
          throw new Error('boom')
        },
        { label: 'test.fail()' },
      ),
    ).toThrow('boom')
    expect(changes).toEqual([])
  })

  test('an action that throws leaves no effect on the fiber', () => {
    const { agentScope } = family()
    const { layers } = layered()
    expect(() =>
      layers.effect(
        agentScope.ctx,
        () => {
          throw new Error('boom')
        },
        { label: 'test.fail()' },
      ),
    ).toThrow('boom')
    expect(effectLabels(agentScope.ctx)).toEqual([])
  })

  test("a duplicate in an existing layer throws the layer's error and keeps the layer's entries", () => {
    const { agent, agentScope } = family()
    const changes: string[] = []
    const { layers, register } = layered(() => changes.push('change'))
    register(agentScope.ctx, 'a', 'A')
    const layer = layers.peek(agent)
    expect(() => register(agentScope.ctx, 'a', 'again')).toThrow(
      'entry "a" is already registered in this scope',
    )
    expect(layers.peek(agent)).toBe(layer)
    expect([...(layer?.named.entries() ?? [])]).toEqual([['a', 'A']])
    expect(changes).toEqual(['change'])
  })

  test('a failed registration does not recompute a merged view', () => {
    const { agent, agentScope } = family()
    const { layers } = layered()
    const view = counted(() => layers.merge(agent, (layer) => layer.named))
    view.value
    expect(() =>
      layers.effect(
        agentScope.ctx,
        (layer) => {
          layer.named.insert('a', 'A')
          throw new Error('boom')
        },
        { label: 'test.fail()' },
      ),
    ).toThrow('boom')
    view.value
    expect(view.runs).toBe(1)
  })
})

describe('ScopedLayers.effect when onChange throws', () => {
  /** A ScopedLayers whose onChange throws while `failing.now` is set, counting every call. */
  function failingOnChange() {
    const failing = { now: false, calls: 0 }
    const setup = layered(() => {
      failing.calls++
      if (failing.now) throw new Error('listener "audit" failed')
    })
    return { ...setup, failing }
  }

  test('the error reaches the caller', () => {
    const { agentScope } = family()
    const { register, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A')).toThrow('listener "audit" failed')
  })

  test('the registration is rolled back (nothing registered)', () => {
    const { agent, agentScope } = family()
    const { register, merged, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A')).toThrow('listener "audit" failed')
    expect(merged(agent)).toEqual([])
  })

  test('the layer the registration created is not left behind', () => {
    const { agent, agentScope } = family()
    const { layers, register, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A')).toThrow('listener "audit" failed')
    expect(layers.peek(agent)).toBeUndefined()
  })

  test('the Cordis effect is disposed (the fiber holds nothing)', () => {
    const { agentScope } = family()
    const { register, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A', { label: 'test.register()' })).toThrow('listener "audit" failed')
    expect(effectLabels(agentScope.ctx)).toEqual([])
  })

  test('the rollback does not call onChange a second time', () => {
    const { agentScope } = family()
    const { register, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A')).toThrow('listener "audit" failed')
    expect(failing.calls).toBe(1)
  })

  test("an earlier registration in the same layer survives (only the failed one is undone)", () => {
    const { agent, agentScope } = family()
    const { layers, register, merged, failing } = failingOnChange()
    register(agentScope.ctx, 'a', 'A')
    const layer = layers.peek(agent)
    failing.now = true
    expect(() => register(agentScope.ctx, 'b', 'B')).toThrow('listener "audit" failed')
    expect(merged(agent)).toEqual([['a', 'A']])
    expect(layers.peek(agent)).toBe(layer)
  })

  test('the same name registers again once onChange stops throwing', () => {
    const { agent, agentScope } = family()
    const { register, merged, failing } = failingOnChange()
    failing.now = true
    expect(() => register(agentScope.ctx, 'a', 'A')).toThrow('listener "audit" failed')
    failing.now = false
    register(agentScope.ctx, 'a', 'again')
    expect(merged(agent)).toEqual([['a', 'again']])
  })

  test('a global registration is rolled back too (the global layer stays)', () => {
    const { app } = family()
    const { layers, register, merged, failing } = failingOnChange()
    const global = layers.global
    failing.now = true
    expect(() => register(app, 'a', 'A')).toThrow('listener "audit" failed')
    expect(merged(undefined)).toEqual([])
    expect([layers.global, global.named.isEmpty()]).toEqual([global, true])
  })
})

describe('ScopedLayers.effect notification', () => {
  test('calls onChange once after a registration', () => {
    const { agentScope } = family()
    const changes: string[] = []
    const { register } = layered(() => changes.push('change'))
    register(agentScope.ctx, 'a', 'A')
    expect(changes).toEqual(['change'])
  })

  test('calls onChange once after an undo', () => {
    const { agentScope } = family()
    const changes: string[] = []
    const { register } = layered(() => changes.push('change'))
    const dispose = register(agentScope.ctx, 'a', 'A')
    changes.length = 0
    dispose()
    dispose()
    expect(changes).toEqual(['change'])
  })

  test.each([
    ['the disposer, then the scope teardown', ['disposer', 'teardown']],
    ['the scope teardown, then the disposer', ['teardown', 'disposer']],
  ] as const)('calls onChange once when %s undo a registration', async (_, order) => {
    const { agentScope } = family()
    const changes: string[] = []
    const { register } = layered(() => changes.push('change'))
    const dispose = register(agentScope.ctx, 'a', 'A')
    changes.length = 0
    for (const undo of order) await (undo === 'disposer' ? dispose() : agentScope.dispose())
    expect(changes).toEqual(['change'])
  })

  test('calls onChange after the entry is visible', () => {
    const { agent, agentScope } = family()
    const seen: [string, string][][] = []
    const { register, merged } = layered(() => seen.push(merged(agent)))
    register(agentScope.ctx, 'a', 'A')
    expect(seen).toEqual([[['a', 'A']]])
  })

  test('notify: false skips onChange on registration and undo', () => {
    const { agentScope } = family()
    const changes: string[] = []
    const { register } = layered(() => changes.push('change'))
    register(agentScope.ctx, 'a', 'A', { notify: false })()
    expect(changes).toEqual([])
  })

  test('the fiber already holds the effect when onChange subscribers run (undo installed first)', () => {
    const { agentScope } = family()
    const changes = signal(0)
    const { register } = layered(() => changes.value++)
    const heldAtNotification: string[][] = []
    const stop = effect(() => {
      if (changes.value > 0) heldAtNotification.push(effectLabels(agentScope.ctx))
    })
    register(agentScope.ctx, 'a', 'A', { label: 'systemPrompt.section()' })
    stop()
    expect(heldAtNotification).toEqual([['systemPrompt.section()']])
  })

  test('a plain onChange callback runs when the fiber already holds the effect', () => {
    const { agentScope } = family()
    const heldAtNotification: string[][] = []
    const { register } = layered(() => heldAtNotification.push(effectLabels(agentScope.ctx)))
    register(agentScope.ctx, 'a', 'A', { label: 'systemPrompt.section()' })
    expect(heldAtNotification).toEqual([['systemPrompt.section()']])
  })

  test('an effect reacting to onChange can call the returned disposer synchronously', () => {
    const { agent, agentScope } = family()
    const changes = signal(0)
    const { layers, register } = layered(() => changes.value++)
    let dispose: (() => unknown) | undefined
    let disposedInEffect = false
    const stop = effect(() => {
      if (changes.value > 0 && dispose !== undefined && !disposedInEffect) {
        disposedInEffect = true
        dispose()
      }
    })
    batch(() => {
      dispose = register(agentScope.ctx, 'a', 'A')
    })
    stop()
    expect(disposedInEffect).toBe(true)
    expect(layers.peek(agent)).toBeUndefined()
    expect(effectLabels(agentScope.ctx)).toEqual([])
  })

  test('an effect reacting to the layer version can call the held disposer synchronously', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    let disposedInEffect = false
    const stop = effect(() => {
      const layer = layers.peek(agent)
      if (layer !== undefined && layer.named.has('a') && !disposedInEffect) {
        disposedInEffect = true
        // The registration's disposer is the only effect the fiber holds.
        const [dispose] = heldDisposers(agentScope.ctx) as (() => unknown)[]
        dispose!()
      }
    })
    register(agentScope.ctx, 'a', 'A')
    stop()
    expect(disposedInEffect).toBe(true)
    expect(layers.peek(agent)).toBeUndefined()
  })

  test('an effect over merge runs once for a registration that creates a layer (one batch)', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    let runs = 0
    const stop = effect(() => {
      layers.merge(agent, (layer) => layer.named)
      runs++
    })
    register(agentScope.ctx, 'a', 'A')
    stop()
    expect(runs).toBe(2)
  })

  test('an effect over merge runs once for an undo that reclaims a layer (one batch)', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    const dispose = register(agentScope.ctx, 'a', 'A')
    let runs = 0
    const stop = effect(() => {
      layers.merge(agent, (layer) => layer.named)
      runs++
    })
    dispose()
    stop()
    expect(runs).toBe(2)
  })
})

describe('ScopedLayers reclamation', () => {
  test('a layer whose last entry is undone is reclaimed', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')()
    expect(layers.peek(agent)).toBeUndefined()
  })

  test('a layer with an entry left is kept', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(agentScope.ctx, 'b', 'B')()
    expect([...(layers.peek(agent)?.named.keys() ?? [])]).toEqual(['a'])
  })

  test('a layer emptied by disposing its scope is reclaimed', async () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(agentScope.ctx, 'b', 'B')
    await agentScope.dispose()
    expect(layers.peek(agent)).toBeUndefined()
  })

  test('a registration after reclamation creates a fresh layer', () => {
    const { agent, agentScope } = family()
    const { layers, created, register } = layered()
    const dispose = register(agentScope.ctx, 'a', 'A')
    const first = layers.peek(agent)
    dispose()
    register(agentScope.ctx, 'b', 'B')
    expect(layers.peek(agent)).not.toBe(first)
    expect(created).toEqual([undefined, agent, agent])
  })

  test('a reclaimed layer drops out of chainLayers', () => {
    const { preset, agent, agentScope, presetScope } = family()
    const { layers, register } = layered()
    register(presetScope.ctx, 'p', 'P')
    register(agentScope.ctx, 'a', 'A')()
    expect(layers.chainLayers(agent).map((layer) => layer.scope)).toEqual([preset])
  })
})

describe('ScopedLayers.chainLayers', () => {
  test('lists existing layers farthest ancestor first and the exact scope last', () => {
    const root = { name: 'root' }
    const { app, preset, agent, presetScope, agentScope } = family()
    bindScopeParent(preset, root)
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(createScope(app, root).ctx, 'r', 'R')
    register(presetScope.ctx, 'p', 'P')
    expect(layers.chainLayers(agent).map((layer) => layer.scope)).toEqual([root, preset, agent])
  })

  test('skips chain keys without a layer', () => {
    const root = { name: 'root' }
    const { app, preset, agent, agentScope } = family()
    bindScopeParent(preset, root)
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(createScope(app, root).ctx, 'r', 'R')
    expect(layers.chainLayers(agent).map((layer) => layer.scope)).toEqual([root, agent])
  })

  test('excludes the global layer', () => {
    const { agent } = family()
    const { layers, register } = layered()
    register(new Context(), 'g', 'G')
    expect(layers.chainLayers(agent)).toEqual([])
  })

  test('is empty for undefined', () => {
    const { layers, register } = layered()
    register(new Context(), 'g', 'G')
    expect(layers.chainLayers(undefined)).toEqual([])
  })

  test("excludes a sibling's and a descendant's layers", () => {
    const { preset, presetScope, agentScope, siblingScope } = family()
    const { layers, register } = layered()
    register(presetScope.ctx, 'p', 'P')
    register(agentScope.ctx, 'a', 'A')
    register(siblingScope.ctx, 's', 'S')
    expect(layers.chainLayers(preset).map((layer) => layer.scope)).toEqual([preset])
  })

  test('follows a rebind of the parent', () => {
    const other = { name: 'other' }
    const app = new Context()
    const agent = { name: 'agent' }
    const binding = bindScopeParent(agent, {})
    const { layers, register } = layered()
    register(createScope(app, other).ctx, 'o', 'O')
    binding.rebind(other)
    expect(layers.chainLayers(agent).map((layer) => layer.scope)).toEqual([other])
  })
})

describe('ScopedLayers.merge', () => {
  test('is the global entries for undefined', () => {
    const { agentScope } = family()
    const { merged, register } = layered()
    register(new Context(), 'g', 'G')
    register(agentScope.ctx, 'a', 'A')
    expect(merged(undefined)).toEqual([['g', 'G']])
  })

  test('lists global entries, then ancestors, then the exact scope', () => {
    const { app, agent, presetScope, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    register(presetScope.ctx, 'p', 'P')
    register(app, 'g', 'G')
    expect(merged(agent)).toEqual([
      ['g', 'G'],
      ['p', 'P'],
      ['a', 'A'],
    ])
  })

  test('keeps insertion order within a layer', () => {
    const { agent, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'z', 'Z')
    register(agentScope.ctx, 'a', 'A')
    expect(merged(agent).map(([name]) => name)).toEqual(['z', 'a'])
  })

  test('the nearest layer wins a name', () => {
    const { app, agent, presetScope, agentScope } = family()
    const { merged, register } = layered()
    register(app, 'intro', 'global')
    register(presetScope.ctx, 'intro', 'preset')
    register(agentScope.ctx, 'intro', 'agent')
    expect(merged(agent)).toEqual([['intro', 'agent']])
  })

  test("an ancestor's entry shadows a global one for the descendant too", () => {
    const { app, agent, presetScope } = family()
    const { merged, register } = layered()
    register(app, 'intro', 'global')
    register(presetScope.ctx, 'intro', 'preset')
    expect(merged(agent)).toEqual([['intro', 'preset']])
  })

  test('a shadowed name keeps the position where it first appeared', () => {
    const { app, agent, presetScope, agentScope } = family()
    const { merged, register } = layered()
    register(app, 'identity', 'global identity')
    register(app, 'tools', 'global tools')
    register(presetScope.ctx, 'persona', 'preset persona')
    register(agentScope.ctx, 'identity', 'agent identity')
    expect(merged(agent)).toEqual([
      ['identity', 'agent identity'],
      ['tools', 'global tools'],
      ['persona', 'preset persona'],
    ])
  })

  test("a sibling's entries are not visible", () => {
    const { agent, siblingScope } = family()
    const { merged, register } = layered()
    register(siblingScope.ctx, 's', 'S')
    expect(merged(agent)).toEqual([])
  })

  test("a descendant's entries are not visible to the ancestor", () => {
    const { preset, agentScope } = family()
    const { merged, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    expect(merged(preset)).toEqual([])
  })

  test('an undone shadowing entry uncovers the shadowed one', () => {
    const { app, agent, agentScope } = family()
    const { merged, register } = layered()
    register(app, 'intro', 'global')
    register(agentScope.ctx, 'intro', 'agent')()
    expect(merged(agent)).toEqual([['intro', 'global']])
  })

  test('returns a fresh Map on every call', () => {
    const { agent } = family()
    const { layers } = layered()
    const pick = (layer: TestLayer) => layer.named
    expect(layers.merge(agent, pick)).not.toBe(layers.merge(agent, pick))
  })
})

describe('ScopedLayers reactivity', () => {
  test('a computed over merge recomputes after an insert into the exact layer', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a'])
    register(agentScope.ctx, 'b', 'B')
    expect(view.value).toEqual(['a', 'b'])
    expect(view.runs).toBe(2)
  })

  test('a computed over merge recomputes when the exact layer is created', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual([])
    register(agentScope.ctx, 'a', 'A')
    expect(view.value).toEqual(['a'])
  })

  test("a computed over merge recomputes when an ancestor's layer is created", () => {
    const { agent, presetScope } = family()
    const { layers, register } = layered()
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual([])
    register(presetScope.ctx, 'p', 'P')
    expect(view.value).toEqual(['p'])
  })

  test('a computed over merge recomputes after a global insert', () => {
    const { app, agent } = family()
    const { layers, register } = layered()
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual([])
    register(app, 'g', 'G')
    expect(view.value).toEqual(['g'])
  })

  test('a computed over merge recomputes after an undo that keeps the layer', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const dispose = register(agentScope.ctx, 'b', 'B')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a', 'b'])
    dispose()
    expect(view.value).toEqual(['a'])
  })

  test('a computed over merge recomputes when the exact layer is reclaimed', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    const dispose = register(agentScope.ctx, 'a', 'A')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a'])
    dispose()
    expect(view.value).toEqual([])
    expect(view.runs).toBe(2)
  })

  test('a computed over merge recomputes after its scope is disposed', async () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a'])
    await agentScope.dispose()
    expect(view.value).toEqual([])
  })

  test('a computed over merge recomputes after the parent is rebound', () => {
    const app = new Context()
    const agent = {}
    const other = {}
    const binding = bindScopeParent(agent, {})
    const { layers, register } = layered()
    register(createScope(app, other).ctx, 'o', 'O')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual([])
    binding.rebind(other)
    expect(view.value).toEqual(['o'])
    expect(view.runs).toBe(2)
  })

  test("a computed over merge does not recompute after a change in a sibling's layer", () => {
    const { agent, agentScope, siblingScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a'])
    register(siblingScope.ctx, 's', 'S')
    register(siblingScope.ctx, 't', 'T')()
    expect(view.value).toEqual(['a'])
    expect(view.runs).toBe(1)
  })

  test("a computed over merge does not recompute after a change in a descendant's layer", () => {
    const { preset, presetScope, agentScope } = family()
    const { layers, register } = layered()
    register(presetScope.ctx, 'p', 'P')
    const view = counted(() => [...layers.merge(preset, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['p'])
    register(agentScope.ctx, 'a', 'A')()
    expect(view.value).toEqual(['p'])
    expect(view.runs).toBe(1)
  })

  test('a computed over merge does not recompute after an unrelated rebind', () => {
    const { agent, agentScope } = family()
    const stranger = {}
    const binding = bindScopeParent(stranger, {})
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const view = counted(() => [...layers.merge(agent, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['a'])
    binding.rebind({})
    expect(view.value).toEqual(['a'])
    expect(view.runs).toBe(1)
  })

  test('a computed over the global merge does not recompute after a scoped change', () => {
    const { app, agentScope } = family()
    const { layers, register } = layered()
    register(app, 'g', 'G')
    const view = counted(() => [...layers.merge(undefined, (layer) => layer.named).keys()])
    expect(view.value).toEqual(['g'])
    register(agentScope.ctx, 'a', 'A')
    expect(view.value).toEqual(['g'])
    expect(view.runs).toBe(1)
  })

  test('a computed over chainLayers recomputes when a chain layer is created', () => {
    const { agent, presetScope } = family()
    const { layers, register } = layered()
    const view = counted(() => layers.chainLayers(agent).map((layer) => layer.scope))
    expect(view.value).toEqual([])
    register(presetScope.ctx, 'p', 'P')
    expect(view.value).toHaveLength(1)
    expect(view.runs).toBe(2)
  })

  test('a computed over chainLayers recomputes when a chain layer is reclaimed', () => {
    const { agent, presetScope } = family()
    const { layers, register } = layered()
    const dispose = register(presetScope.ctx, 'p', 'P')
    const view = counted(() => layers.chainLayers(agent).length)
    expect(view.value).toBe(1)
    dispose()
    expect(view.value).toBe(0)
  })

  test('a computed over chainLayers recomputes after the parent is rebound', () => {
    const app = new Context()
    const agent = {}
    const other = {}
    const binding = bindScopeParent(agent, {})
    const { layers, register } = layered()
    register(createScope(app, other).ctx, 'o', 'O')
    const view = counted(() => layers.chainLayers(agent).length)
    expect(view.value).toBe(0)
    binding.rebind(other)
    expect(view.value).toBe(1)
  })

  test("a computed over chainLayers does not recompute when a sibling's layer is created", () => {
    const { agent, siblingScope } = family()
    const { layers, register } = layered()
    const view = counted(() => layers.chainLayers(agent).length)
    expect(view.value).toBe(0)
    register(siblingScope.ctx, 's', 'S')
    expect(view.value).toBe(0)
    expect(view.runs).toBe(1)
  })

  test('a computed over chainLayers does not recompute after an insert into an existing layer (it reads slots only)', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    register(agentScope.ctx, 'a', 'A')
    const view = counted(() => layers.chainLayers(agent).length)
    expect(view.value).toBe(1)
    register(agentScope.ctx, 'b', 'B')
    expect(view.value).toBe(1)
    expect(view.runs).toBe(1)
  })

  test('a computed over peek recomputes when the exact layer is created', () => {
    const { agent, agentScope } = family()
    const { layers, register } = layered()
    const view = counted(() => layers.peek(agent) !== undefined)
    expect(view.value).toBe(false)
    register(agentScope.ctx, 'a', 'A')
    expect(view.value).toBe(true)
  })

  test("a computed over peek does not recompute when another key's layer is created", () => {
    const { agent, presetScope, siblingScope } = family()
    const { layers, register } = layered()
    const view = counted(() => layers.peek(agent) !== undefined)
    expect(view.value).toBe(false)
    register(presetScope.ctx, 'p', 'P')
    register(siblingScope.ctx, 's', 'S')
    expect(view.value).toBe(false)
    expect(view.runs).toBe(1)
  })
})
