import { batch, computed, effect, signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { ChangeRelay } from '../../src/signals/tracked.js'

/** Counts the runs of an effect reading `relay.pulse`, its first (subscribing) run excluded. */
function pulses(relay: ChangeRelay): { count: number; stop: () => void } {
  const heard = { count: -1, stop: () => {} }
  heard.stop = effect(() => {
    relay.pulse.value
    heard.count++
  })
  return heard
}

describe('ChangeRelay', () => {
  test('adding a source does not pulse; a new value of it does', () => {
    const relay = new ChangeRelay()
    const heard = pulses(relay)
    const source = signal('a')
    relay.add(source)
    expect(heard.count).toBe(0)
    source.value = 'b'
    expect(heard.count).toBe(1)
  })

  test('a batch that writes several sources is heard once, after the batch', () => {
    const relay = new ChangeRelay()
    const heard = pulses(relay)
    const sources = [signal(0), signal(0), signal(0)]
    for (const source of sources) relay.add(source)
    batch(() => {
      for (const source of sources) source.value++
      expect(heard.count).toBe(0)
    })
    expect(heard.count).toBe(1)
  })

  test('a source added twice keeps its relay until both adds are deleted', () => {
    const relay = new ChangeRelay()
    const heard = pulses(relay)
    const source = signal(0)
    relay.add(source)
    relay.add(source)
    relay.delete(source)
    source.value++
    relay.delete(source)
    source.value++
    expect(heard.count).toBe(1)
  })

  test('a source whose read throws pulses and never throws at the writer', () => {
    const relay = new ChangeRelay()
    const heard = pulses(relay)
    const input = signal(0)
    relay.add(
      computed(() => {
        if (input.value > 0) throw new Error('derivation failed')
        return input.value
      }),
    )
    expect(() => (input.value = 1)).not.toThrow()
    expect(heard.count).toBe(1)
  })

  test('clear() stops every relay', () => {
    const relay = new ChangeRelay()
    const heard = pulses(relay)
    const source = signal(0)
    relay.add(source)
    relay.clear()
    source.value++
    relay.delete(source)
    expect(heard.count).toBe(0)
  })
})
