import { computed, type ReadonlySignal } from '@preact/signals-core'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import { NamedEntries, type Undo } from '../../src/index.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const NAMES = ['a', 'b', 'c', 'd'] as const

/** Reference model: a plain Map from name to the id of the insertion that holds it. */
interface Model {
  readonly entries: Map<string, { readonly id: number; readonly value: string }>
  nextId: number
}

interface Real {
  readonly table: NamedEntries<string>
  /** Every successful insertion, by id, with its undo (kept after undoing, to replay stale undos). */
  readonly insertions: { readonly id: number; readonly name: string; readonly undo: Undo }[]
  /** A long-lived computed over the table, proving reads subscribe and mutations notify. */
  readonly view: ReadonlySignal<[string, string][]>
}

function assertMatches(model: Model, real: Real): void {
  const expected = [...model.entries].map(([name, { value }]): [string, string] => [name, value])
  expect([...real.table.entries()]).toEqual(expected)
  expect([...real.table.keys()]).toEqual(expected.map(([name]) => name))
  expect([...real.table.values()]).toEqual(expected.map(([, value]) => value))
  expect(real.table.size).toBe(expected.length)
  expect(real.table.isEmpty()).toBe(expected.length === 0)
  for (const name of NAMES) {
    expect(real.table.has(name)).toBe(model.entries.has(name))
    expect(real.table.get(name)).toBe(model.entries.get(name)?.value)
  }
  expect(real.view.value).toEqual(expected)
}

class Insert implements fc.Command<Model, Real> {
  constructor(
    readonly name: string,
    readonly value: string,
  ) {}
  check(): boolean {
    return true
  }
  run(model: Model, real: Real): void {
    if (model.entries.has(this.name)) {
      expect(() => real.table.insert(this.name, this.value)).toThrow(
        `entry "${this.name}" is already registered`,
      )
    } else {
      const id = model.nextId++
      model.entries.set(this.name, { id, value: this.value })
      real.insertions.push({ id, name: this.name, undo: real.table.insert(this.name, this.value) })
    }
    assertMatches(model, real)
  }
  toString(): string {
    return `insert(${JSON.stringify(this.name)}, ${JSON.stringify(this.value)})`
  }
}

/** Calls the undo of an earlier insertion, whether or not it was already called. */
class UndoInsertion implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check(model: Readonly<Model>): boolean {
    return model.nextId > 0
  }
  run(model: Model, real: Real): void {
    const { id, name, undo } = real.insertions[this.pick % real.insertions.length]!
    if (model.entries.get(name)?.id === id) model.entries.delete(name)
    undo()
    assertMatches(model, real)
  }
  toString(): string {
    return `undo(#${this.pick})`
  }
}

test('NamedEntries matches a Map model under random insert/undo/re-insert sequences (stale undos included)', () => {
  const commands = [
    fc
      .tuple(fc.constantFrom(...NAMES), fc.constantFrom('x', 'y', 'z'))
      .map(([name, value]) => new Insert(name, value)),
    fc.nat().map((pick) => new UndoInsertion(pick)),
  ]
  fc.assert(
    fc.property(fc.commands(commands, { maxCommands: 60, size: 'medium' }), (cmds) => {
      const table = new NamedEntries<string>(
        (name) => new Error(`entry "${name}" is already registered in this layer`),
      )
      const real: Real = { table, insertions: [], view: computed(() => [...table.entries()]) }
      real.view.value
      fc.modelRun(() => ({ model: { entries: new Map(), nextId: 0 }, real }), cmds)
    }),
    { numRuns },
  )
})
