import { computed } from '@preact/signals-core'
import { Context } from 'cordis'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  NamedEntries,
  ScopedLayers,
  bindScopeParent,
  createScope,
  scopeChainOf,
  type Scope,
  type ScopeKey,
  type ScopeLayer,
  type ScopeParentBinding,
} from '../../src/index.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const KEYS = 4
const NAMES = ['a', 'b', 'c'] as const

/** `undefined` stands for the global layer / an unscoped registration. */
type Where = number | undefined

/** A successful registration in the model: its layer, the scope it went through (undefined: root). */
interface ModelRegistration {
  readonly layer: Where
  readonly scope: number | undefined
  readonly name: string
  live: boolean
}

/**
 * Reference model: one plain insertion-ordered Map per layer (name → value),
 * a parent map over key indices, and the scopes minted so far.
 */
interface Model {
  readonly layers: Map<Where, Map<string, string>>
  readonly parent: Map<number, number | undefined>
  readonly bound: Set<number>
  /** Per minted scope: its key index and whether it is still alive. */
  readonly scopes: { readonly key: number; alive: boolean }[]
  readonly registrations: ModelRegistration[]
}

interface TestLayer extends ScopeLayer {
  readonly key: ScopeKey | undefined
  readonly named: NamedEntries<string>
}

/** A long-lived computed and how often it has run. */
interface Counted<T> {
  readonly read: () => T
  runs: number
}

interface Real {
  readonly app: Context
  readonly keys: ScopeKey[]
  readonly layers: ScopedLayers<TestLayer>
  readonly scopes: Scope[]
  readonly disposers: (() => unknown)[]
  readonly bindings: Map<number, ScopeParentBinding>
  /** Per view (`undefined` = global, then each key): merge and chainLayers computeds. */
  readonly merged: Map<Where, Counted<[string, string][]>>
  readonly chained: Map<number, Counted<(ScopeKey | undefined)[]>>
}

function counted<T>(fn: () => T): Counted<T> {
  const view: Counted<T> = { read: () => value.value, runs: 0 }
  const value = computed(() => {
    view.runs++
    return fn()
  })
  value.value
  return view
}

function modelChain(model: Model, key: Where): number[] {
  const chain: number[] = []
  for (let at = key; at !== undefined; at = model.parent.get(at)) chain.push(at)
  return chain
}

function layerOf(model: Model, where: Where): Map<string, string> {
  let layer = model.layers.get(where)
  if (layer === undefined) model.layers.set(where, (layer = new Map()))
  return layer
}

/**
 * The model's merge: the global layer, then the chain's layers farthest first;
 * a later layer wins a name, and the name keeps the position where it first
 * appeared.
 */
function modelMerge(model: Model, key: Where): [string, string][] {
  const merged = new Map<string, string>()
  const order: Where[] = [undefined, ...modelChain(model, key).reverse()]
  for (const where of order) {
    for (const [name, value] of model.layers.get(where) ?? []) merged.set(name, value)
  }
  return [...merged]
}

/** The model's chainLayers: chain keys with a non-empty layer, farthest first. */
function modelChainLayers(model: Model, key: number): number[] {
  return modelChain(model, key)
    .reverse()
    .filter((at) => (model.layers.get(at)?.size ?? 0) > 0)
}

const VIEWS: Where[] = [undefined, ...Array.from({ length: KEYS }, (_, key) => key)]

/**
 * What a command changed, for predicting which views must recompute: the
 * layers whose entries changed, the keys whose layer appeared or vanished, and
 * the key whose parent link changed.
 */
interface Changes {
  readonly entries: Set<Where>
  readonly slots: Set<number>
  readonly link?: number
}

const NOTHING: Changes = { entries: new Set(), slots: new Set() }

/**
 * Checks every view against the model, and that exactly the affected views
 * recomputed: a view depends on the global layer's entries and, along its
 * chain (as it was before the command), on each key's link, layer slot and
 * layer entries.
 */
function verify(
  model: Model,
  real: Real,
  changes: Changes,
  chainsBefore: Map<Where, number[]>,
  runsBefore: Map<string, number>,
): void {
  for (const view of VIEWS) {
    const key = view === undefined ? undefined : real.keys[view]
    const before = chainsBefore.get(view)!
    const throughChain = (at: Where) => at === undefined || before.includes(at)
    const entriesChanged = [...changes.entries].some(throughChain)
    const slotChanged = [...changes.slots].some((at) => before.includes(at))
    const linkChanged = changes.link !== undefined && before.includes(changes.link)

    const expectedMerge = modelMerge(model, view)
    expect([...real.layers.merge(key, (layer) => layer.named)]).toEqual(expectedMerge)
    const merged = real.merged.get(view)!
    expect(merged.read()).toEqual(expectedMerge)
    expect(merged.runs - runsBefore.get(`merge:${view}`)!).toBe(
      entriesChanged || slotChanged || linkChanged ? 1 : 0,
    )

    if (view === undefined) continue
    expect(scopeChainOf(key)).toEqual(modelChain(model, view).map((at) => real.keys[at]))
    const expectedLayers = modelChainLayers(model, view).map((at) => real.keys[at])
    expect(real.layers.chainLayers(key).map((layer) => layer.key)).toEqual(expectedLayers)
    const chained = real.chained.get(view)!
    expect(chained.read()).toEqual(expectedLayers)
    expect(chained.runs - runsBefore.get(`chain:${view}`)!).toBe(
      slotChanged || linkChanged ? 1 : 0,
    )
    // No scoped layer is left once its entries are gone; an existing one is the exact key's.
    const occupied = (model.layers.get(view)?.size ?? 0) > 0
    expect(real.layers.peek(key)?.key).toBe(occupied ? key : undefined)
  }
  expect(real.layers.peek(undefined)).toBeUndefined()
}

/** Snapshots chains and run counts, runs `change` (which updates the model and reports what changed), then verifies. */
async function step(
  model: Model,
  real: Real,
  change: () => Changes | Promise<Changes>,
): Promise<void> {
  const chainsBefore = new Map(VIEWS.map((view) => [view, modelChain(model, view)]))
  const runsBefore = new Map<string, number>()
  for (const [view, merged] of real.merged) runsBefore.set(`merge:${view}`, merged.runs)
  for (const [view, chained] of real.chained) runsBefore.set(`chain:${view}`, chained.runs)
  verify(model, real, await change(), chainsBefore, runsBefore)
}

/** Layer keys whose layer the model holds non-empty, for detecting appearing/vanishing layers. */
function occupied(model: Model): Set<number> {
  const keys = new Set<number>()
  for (const [where, layer] of model.layers) {
    if (where !== undefined && layer.size > 0) keys.add(where)
  }
  return keys
}

function slotChanges(before: Set<number>, after: Set<number>): Set<number> {
  return new Set([...before, ...after].filter((key) => before.has(key) !== after.has(key)))
}

class Mint implements fc.AsyncCommand<Model, Real> {
  constructor(readonly key: number) {}
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    await step(model, real, () => {
      real.scopes.push(createScope(real.app, real.keys[this.key]!))
      model.scopes.push({ key: this.key, alive: true })
      return NOTHING
    })
  }
  toString(): string {
    return `mint(k${this.key})`
  }
}

/** Registers through the root context (`scope` undefined) or through a minted scope's ctx. */
class Register implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly scope: number | undefined,
    readonly name: string,
    readonly value: string,
  ) {}
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    const scope =
      this.scope === undefined || model.scopes.length === 0
        ? undefined
        : this.scope % model.scopes.length
    const ctx = scope === undefined ? real.app : real.scopes[scope]!.ctx
    const where = scope === undefined ? undefined : model.scopes[scope]!.key
    const register = () =>
      real.layers.effect(ctx, (layer) => layer.named.insert(this.name, this.value), {
        label: 'test.register()',
      })
    await step(model, real, () => {
      if (scope !== undefined && !model.scopes[scope]!.alive) {
        expect(register).toThrow(/inactive/)
        return NOTHING
      }
      if (model.layers.get(where)?.has(this.name)) {
        expect(register).toThrow(`entry "${this.name}" is already registered`)
        return NOTHING
      }
      const before = occupied(model)
      real.disposers.push(register())
      layerOf(model, where).set(this.name, this.value)
      model.registrations.push({ layer: where, scope, name: this.name, live: true })
      return { entries: new Set([where]), slots: slotChanges(before, occupied(model)) }
    })
  }
  toString(): string {
    const through = this.scope === undefined ? 'root' : `scopes[${this.scope} % minted]`
    return `register(${through}, ${JSON.stringify(this.name)}, ${JSON.stringify(this.value)})`
  }
}

function undoInModel(model: Model, id: number): Where[] {
  const registration = model.registrations[id]!
  if (!registration.live) return []
  registration.live = false
  model.layers.get(registration.layer)!.delete(registration.name)
  return [registration.layer]
}

/** Calls an earlier registration's disposer, whether or not it already ran. */
class Undo implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check(model: Readonly<Model>): boolean {
    return model.registrations.length > 0
  }
  async run(model: Model, real: Real): Promise<void> {
    const id = this.pick % model.registrations.length
    await step(model, real, () => {
      const before = occupied(model)
      const entries = new Set(undoInModel(model, id))
      real.disposers[id]!()
      return { entries, slots: slotChanges(before, occupied(model)) }
    })
  }
  toString(): string {
    return `undo(registrations[${this.pick} % registered])`
  }
}

/** Disposes a minted scope (again, possibly), which undoes every registration made through it. */
class Dispose implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check(model: Readonly<Model>): boolean {
    return model.scopes.length > 0
  }
  async run(model: Model, real: Real): Promise<void> {
    const scope = this.pick % model.scopes.length
    await step(model, real, async () => {
      const before = occupied(model)
      const entries = new Set<Where>()
      model.scopes[scope]!.alive = false
      model.registrations.forEach((registration, id) => {
        if (registration.scope !== scope) return
        for (const where of undoInModel(model, id)) entries.add(where)
      })
      await real.scopes[scope]!.dispose()
      return { entries, slots: slotChanges(before, occupied(model)) }
    })
  }
  toString(): string {
    return `dispose(scopes[${this.pick} % minted])`
  }
}

class Bind implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: number,
    readonly parent: number,
  ) {}
  check(): boolean {
    return true
  }
  async run(model: Model, real: Real): Promise<void> {
    const bind = () => bindScopeParent(real.keys[this.key]!, real.keys[this.parent]!)
    await step(model, real, () => {
      if (model.bound.has(this.key)) {
        expect(bind).toThrow(/already bound/)
        return NOTHING
      }
      if (modelChain(model, this.parent).includes(this.key)) {
        expect(bind).toThrow(/cycle/)
        return NOTHING
      }
      real.bindings.set(this.key, bind())
      model.bound.add(this.key)
      model.parent.set(this.key, this.parent)
      return { ...NOTHING, link: this.key }
    })
  }
  toString(): string {
    return `bind(k${this.key}, k${this.parent})`
  }
}

class Rebind implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: number,
    readonly parent: number | undefined,
  ) {}
  check(model: Readonly<Model>): boolean {
    return model.bound.has(this.key)
  }
  async run(model: Model, real: Real): Promise<void> {
    const parent = this.parent === undefined ? undefined : real.keys[this.parent]
    const rebind = () => real.bindings.get(this.key)!.rebind(parent)
    await step(model, real, () => {
      if (this.parent !== undefined && modelChain(model, this.parent).includes(this.key)) {
        expect(rebind).toThrow(/cycle/)
        return NOTHING
      }
      const moved = model.parent.get(this.key) !== this.parent
      rebind()
      model.parent.set(this.key, this.parent)
      return moved ? { ...NOTHING, link: this.key } : NOTHING
    })
  }
  toString(): string {
    return `rebind(k${this.key}, ${this.parent === undefined ? 'undefined' : `k${this.parent}`})`
  }
}

function setup(): { model: Model; real: Real } {
  // Fresh keys per run: the parent relation is module-global.
  const keys = Array.from({ length: KEYS }, (_, index) => ({ name: `k${index}` }))
  const layers = new ScopedLayers<TestLayer>((key) => {
    const named = new NamedEntries<string>(
      (name) => new Error(`entry "${name}" is already registered in this layer`),
    )
    return { key, named, isEmpty: () => named.isEmpty() }
  })
  const keyOf = (view: Where) => (view === undefined ? undefined : keys[view])
  const merged = new Map(
    VIEWS.map((view) => [view, counted(() => [...layers.merge(keyOf(view), (l) => l.named)])]),
  )
  const chained = new Map(
    keys.map((key, view) => [view, counted(() => layers.chainLayers(key).map((l) => l.key))]),
  )
  const model: Model = {
    layers: new Map(),
    parent: new Map(),
    bound: new Set(),
    scopes: [],
    registrations: [],
  }
  const real: Real = {
    app: new Context(),
    keys,
    layers,
    scopes: [],
    disposers: [],
    bindings: new Map(),
    merged,
    chained,
  }
  return { model, real }
}

test('ScopedLayers matches a Map-per-layer and parent-map model under random register/undo/mint/dispose/bind/rebind sequences', async () => {
  const key = fc.nat({ max: KEYS - 1 })
  const through = fc.option(fc.nat(), { nil: undefined, freq: 4 })
  const register = fc
    .tuple(through, fc.constantFrom(...NAMES), fc.constantFrom('x', 'y'))
    .map(([scope, name, value]) => new Register(scope, name, value))
  const commands = [
    key.map((k) => new Mint(k)),
    // Listed twice: registrations are what the other commands act on.
    register,
    register,
    fc.nat().map((pick) => new Undo(pick)),
    fc.nat().map((pick) => new Dispose(pick)),
    fc.tuple(key, key).map(([k, parent]) => new Bind(k, parent)),
    fc.tuple(key, fc.option(key, { nil: undefined })).map(([k, parent]) => new Rebind(k, parent)),
  ]
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'medium' }), async (cmds) => {
      await fc.asyncModelRun(setup, cmds)
    }),
    { numRuns },
  )
})
