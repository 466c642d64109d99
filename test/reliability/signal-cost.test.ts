import { batch, signal, type Signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// SPEC §2 Reliability: "Registering N signal-valued inputs costs O(N) overall,
// and one signal write costs time independent of how many other signal inputs
// are registered." Proven by counting reads of each input's `value`, not by
// timing: an input that is re-read for every later registration, or for every
// write to another input, shows up as a count that grows with N.

const N = 300

/** A signal whose `value` reads (by anyone but the signal library itself) are counted in `reads`. */
function countedSignal(initial: string, reads: { count: number }): Signal<string> {
  const source = signal(initial)
  let proto: object | null = Object.getPrototypeOf(source)
  let descriptor: PropertyDescriptor | undefined
  while (proto !== null && (descriptor = Object.getOwnPropertyDescriptor(proto, 'value')) === undefined) {
    proto = Object.getPrototypeOf(proto)
  }
  Object.defineProperty(source, 'value', {
    get() {
      reads.count++
      return descriptor!.get!.call(source)
    },
    set(value: string) {
      descriptor!.set!.call(source, value)
    },
  })
  return source
}

function registerSections(app: Context, inputs: readonly Signal<string>[]): void {
  inputs.forEach((text, i) => app.systemPrompt.section({ name: `s${i}`, order: i, text }))
}

function changes(app: Context): { count: number } {
  const heard = { count: 0 }
  app.on('system-prompt/change', () => void heard.count++)
  return heard
}

describe('the cost of signal inputs', () => {
  test('registering N signal inputs reads each input once (not once per later registration)', async () => {
    const app = await mount(BARE)
    const reads = { count: 0 }
    const inputs = Array.from({ length: N }, (_, i) => countedSignal(`text ${i}`, reads))
    registerSections(app, inputs)
    expect(reads.count).toBe(N)
  })

  test('one signal write reads only the written input (not every registered signal input)', async () => {
    const app = await mount(BARE)
    const reads = { count: 0 }
    const inputs = Array.from({ length: N }, (_, i) => countedSignal(`text ${i}`, reads))
    registerSections(app, inputs)
    const heard = changes(app)
    reads.count = 0
    inputs[N >> 1]!.value = 'rewritten'
    expect({ reads: reads.count, changes: heard.count }).toEqual({ reads: 1, changes: 1 })
  })

  test('a batch that writes many inputs and registers a section emits one change, reading only the written inputs', async () => {
    const app = await mount(BARE)
    const reads = { count: 0 }
    const inputs = Array.from({ length: N }, (_, i) => countedSignal(`text ${i}`, reads))
    registerSections(app, inputs)
    const heard = changes(app)
    reads.count = 0
    batch(() => {
      for (let i = 0; i < 10; i++) inputs[i]!.value = `rewritten ${i}`
      app.systemPrompt.section({ name: 'late', order: N, text: 'late text' })
    })
    expect({ reads: reads.count, changes: heard.count }).toEqual({ reads: 10, changes: 1 })
  })

  test('disposing one of N signal registrations reads no input', async () => {
    const app = await mount(BARE)
    const reads = { count: 0 }
    const inputs = Array.from({ length: N }, (_, i) => countedSignal(`text ${i}`, reads))
    const disposers = inputs.map((text, i) => app.systemPrompt.section({ name: `s${i}`, order: i, text }))
    const heard = changes(app)
    reads.count = 0
    await disposers[0]!()
    expect({ reads: reads.count, changes: heard.count }).toEqual({ reads: 0, changes: 1 })
  })
})
