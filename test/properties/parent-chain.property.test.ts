import { computed } from '@preact/signals-core'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  bindScopeParent,
  scopeChainOf,
  scopeParentOf,
  type ScopeKey,
  type ScopeParentBinding,
} from '../../src/index.js'
import { isScopeWithin } from '../../src/scope/parent-chain.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const KEYS = 5

/** Reference model: a plain parent map over key indices, plus which keys were bound. */
interface Model {
  readonly parent: Map<number, number | undefined>
  readonly bound: Set<number>
}

/** A chain view per key: a long-lived computed and how often it has run. */
interface ChainView {
  readonly read: () => ScopeKey[]
  runs: number
}

interface Real {
  readonly keys: ScopeKey[]
  readonly bindings: Map<number, ScopeParentBinding>
  readonly views: ChainView[]
}

function modelChain(model: Model, key: number): number[] {
  const chain: number[] = []
  for (let at: number | undefined = key; at !== undefined; at = model.parent.get(at)) chain.push(at)
  return chain
}

function wouldCycle(model: Model, key: number, parent: number | undefined): boolean {
  return parent !== undefined && modelChain(model, parent).includes(key)
}

/**
 * Runs `change`, then checks every key against the model, and that exactly
 * the chain views whose chain passed through `changed` (the key whose link
 * moved, if any) recomputed.
 */
function step(model: Model, real: Real, changed: number | undefined, change: () => void): void {
  const affected = real.keys.map(
    (_, key) => changed !== undefined && modelChain(model, key).includes(changed),
  )
  const runsBefore = real.views.map((view) => view.runs)
  change()
  real.keys.forEach((key, index) => {
    const chain = modelChain(model, index).map((at) => real.keys[at])
    expect(scopeChainOf(key)).toEqual(chain)
    expect(real.views[index]!.read()).toEqual(chain)
    expect(real.views[index]!.runs - runsBefore[index]!).toBe(affected[index] ? 1 : 0)
    expect(scopeParentOf(key)).toBe(chain[1])
    real.keys.forEach((other, otherIndex) => {
      expect(isScopeWithin(key, other)).toBe(modelChain(model, index).includes(otherIndex))
    })
  })
}

class Bind implements fc.Command<Model, Real> {
  constructor(
    readonly key: number,
    readonly parent: number,
  ) {}
  check(): boolean {
    return true
  }
  run(model: Model, real: Real): void {
    const bind = () => bindScopeParent(real.keys[this.key]!, real.keys[this.parent]!)
    if (model.bound.has(this.key)) {
      step(model, real, undefined, () => expect(bind).toThrow(/already bound/))
    } else if (wouldCycle(model, this.key, this.parent)) {
      step(model, real, undefined, () => expect(bind).toThrow(/cycle/))
    } else {
      const changed = model.parent.get(this.key) === this.parent ? undefined : this.key
      step(model, real, changed, () => {
        real.bindings.set(this.key, bind())
        model.bound.add(this.key)
        model.parent.set(this.key, this.parent)
      })
    }
  }
  toString(): string {
    return `bind(k${this.key}, k${this.parent})`
  }
}

class Rebind implements fc.Command<Model, Real> {
  constructor(
    readonly key: number,
    readonly parent: number | undefined,
  ) {}
  check(model: Readonly<Model>): boolean {
    return model.bound.has(this.key)
  }
  run(model: Model, real: Real): void {
    const binding = real.bindings.get(this.key)!
    const rebind = () => binding.rebind(this.parent === undefined ? undefined : real.keys[this.parent])
    if (wouldCycle(model, this.key, this.parent)) {
      step(model, real, undefined, () => expect(rebind).toThrow(/cycle/))
    } else {
      const changed = model.parent.get(this.key) === this.parent ? undefined : this.key
      step(model, real, changed, () => {
        rebind()
        model.parent.set(this.key, this.parent)
      })
    }
  }
  toString(): string {
    return `rebind(k${this.key}, ${this.parent === undefined ? 'undefined' : `k${this.parent}`})`
  }
}

test('the parent relation matches a parent-map model (once-per-key bind, cycle rejection, reactive chains)', () => {
  const key = fc.nat({ max: KEYS - 1 })
  const commands = [
    fc.tuple(key, key).map(([k, parent]) => new Bind(k, parent)),
    fc.tuple(key, fc.option(key, { nil: undefined })).map(([k, parent]) => new Rebind(k, parent)),
  ]
  fc.assert(
    fc.property(fc.commands(commands, { maxCommands: 40, size: 'medium' }), (cmds) => {
      // Fresh keys per run: the parent relation is module-global.
      const keys = Array.from({ length: KEYS }, (_, index) => ({ name: `k${index}` }))
      const views = keys.map((key) => {
        const view: ChainView = { read: () => chain.value, runs: 0 }
        const chain = computed(() => {
          view.runs++
          return scopeChainOf(key)
        })
        chain.value
        return view
      })
      const real: Real = { keys, bindings: new Map(), views }
      const model: Model = { parent: new Map(), bound: new Set() }
      fc.modelRun(() => ({ model, real }), cmds)
    }),
    { numRuns },
  )
})
