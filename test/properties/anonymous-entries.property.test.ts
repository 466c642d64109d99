import { computed, type ReadonlySignal } from '@preact/signals-core'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import { AnonymousEntries, type Undo } from '../../src/index.js'

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

/** Reference model: a plain array of live appends, each with the id of its append. */
interface Model {
  readonly entries: { readonly id: number; readonly value: string }[]
  nextId: number
}

interface Real {
  readonly table: AnonymousEntries<string>
  /** Every append's undo by id (kept after undoing, to replay them). */
  readonly undos: Undo[]
  /** A long-lived computed over the values, proving reads subscribe and mutations notify. */
  readonly view: ReadonlySignal<string[]>
}

function assertMatches(model: Model, real: Real): void {
  const expected = model.entries.map(({ value }) => value)
  expect([...real.table.values()]).toEqual(expected)
  expect(real.table.size).toBe(expected.length)
  expect(real.table.isEmpty()).toBe(expected.length === 0)
  expect(real.view.value).toEqual(expected)
}

class Append implements fc.Command<Model, Real> {
  constructor(readonly value: string) {}
  check(): boolean {
    return true
  }
  run(model: Model, real: Real): void {
    model.entries.push({ id: model.nextId++, value: this.value })
    real.undos.push(real.table.append(this.value))
    assertMatches(model, real)
  }
  toString(): string {
    return `append(${JSON.stringify(this.value)})`
  }
}

/** Calls the undo of an earlier append, whether or not it was already called. */
class UndoAppend implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check(model: Readonly<Model>): boolean {
    return model.nextId > 0
  }
  run(model: Model, real: Real): void {
    const id = this.pick % real.undos.length
    const index = model.entries.findIndex((entry) => entry.id === id)
    if (index >= 0) model.entries.splice(index, 1)
    real.undos[id]!()
    assertMatches(model, real)
  }
  toString(): string {
    return `undo(#${this.pick})`
  }
}

test('AnonymousEntries matches an array model under random append/undo sequences (equal values stay independent)', () => {
  const commands = [
    // Two values only, so equal values are appended often.
    fc.constantFrom('same', 'other').map((value) => new Append(value)),
    fc.nat().map((pick) => new UndoAppend(pick)),
  ]
  fc.assert(
    fc.property(fc.commands(commands, { maxCommands: 60, size: 'medium' }), (cmds) => {
      const table = new AnonymousEntries<string>()
      const real: Real = { table, undos: [], view: computed(() => [...table.values()]) }
      real.view.value
      fc.modelRun(() => ({ model: { entries: [], nextId: 0 }, real }), cmds)
    }),
    { numRuns },
  )
})
