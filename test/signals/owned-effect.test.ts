import { signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createScope, ownedEffect, type EffectOwner } from '../../src/index.js'

/** A minimal owner that records the effects it holds, like a Cordis fiber. */
function fakeOwner() {
  const held: { label: string | undefined; dispose: () => void; stop: () => unknown }[] = []
  const owner: EffectOwner = {
    effect(execute, label) {
      const dispose = execute()
      const stop = () => {
        const index = held.findIndex((entry) => entry.stop === stop)
        if (index >= 0) held.splice(index, 1)[0]!.dispose()
      }
      held.push({ label, dispose, stop })
      return stop
    },
  }
  const unload = () => {
    for (const entry of held.splice(0)) entry.dispose()
  }
  return { owner, held, unload }
}

describe('ownedEffect', () => {
  test('runs the effect immediately', () => {
    const { owner } = fakeOwner()
    const runs: number[] = []
    const source = signal(1)
    ownedEffect(owner, () => {
      runs.push(source.value)
    })
    expect(runs).toEqual([1])
  })

  test('reruns when a signal it read changes', () => {
    const { owner } = fakeOwner()
    const runs: number[] = []
    const source = signal(1)
    ownedEffect(owner, () => {
      runs.push(source.value)
    })
    source.value = 2
    expect(runs).toEqual([1, 2])
  })

  test('returns the exact disposer the owner returned', () => {
    const { owner, held } = fakeOwner()
    const dispose = ownedEffect(owner, () => {})
    expect(dispose).toBe(held[0]!.stop)
  })

  test('passes its label to the owner', () => {
    const { owner, held } = fakeOwner()
    ownedEffect(owner, () => {}, 'systemPrompt.change')
    expect(held[0]!.label).toBe('systemPrompt.change')
  })

  test('labels the owner effect "signal effect" by default', () => {
    const { owner, held } = fakeOwner()
    ownedEffect(owner, () => {})
    expect(held[0]!.label).toBe('signal effect')
  })

  test('stops reacting once the returned disposer is called', () => {
    const { owner } = fakeOwner()
    const runs: number[] = []
    const source = signal(1)
    const dispose = ownedEffect(owner, () => {
      runs.push(source.value)
    })
    dispose()
    source.value = 2
    expect(runs).toEqual([1])
  })

  test('stops reacting once the owner unloads', () => {
    const { owner, unload } = fakeOwner()
    const runs: number[] = []
    const source = signal(1)
    ownedEffect(owner, () => {
      runs.push(source.value)
    })
    unload()
    source.value = 2
    expect(runs).toEqual([1])
  })

  test('runs the cleanup the effect returned when disposed', () => {
    const { owner } = fakeOwner()
    const log: string[] = []
    const dispose = ownedEffect(owner, () => () => log.push('cleanup'))
    dispose()
    expect(log).toEqual(['cleanup'])
  })

  test('is disposed with a real Cordis scope fiber', async () => {
    const app = new Context()
    const scope = createScope(app, { name: 'agent' })
    const runs: number[] = []
    const source = signal(1)
    ownedEffect(scope.ctx, () => {
      runs.push(source.value)
    })
    await scope.dispose()
    source.value = 2
    expect(runs).toEqual([1])
  })

  test('registers a labelled effect on a real Cordis fiber', () => {
    const app = new Context()
    const scope = createScope(app, { name: 'agent' })
    ownedEffect(scope.ctx, () => {}, 'systemPrompt.change')
    expect(scope.ctx.fiber.getEffects().map((meta) => meta.label)).toEqual(['systemPrompt.change'])
  })
})
