/**
 * The record of a result (and the scope of its contexts array) lives in a
 * WeakMap keyed by the exact object: it leaves no trace a caller could see
 * or copy, and a copy has none.
 */
import { describe, expect, test } from 'vitest'
import { assembledFor, recordOf, recordScope, withRecord, type AssemblyRecord } from '../../src/assembly/provenance.js'

function record(scope: object | undefined): AssemblyRecord {
  const none = { list: [] }
  return { provenance: { scope, contexts: none, variables: none }, slot: { stats: {} as AssemblyRecord['slot']['stats'] } }
}

describe('result records', () => {
  test('are found on the exact object only: not on a spread, a clone, a proxy or an heir', () => {
    const result = { contexts: [], variables: {} }
    const rec = record(undefined)
    expect(withRecord(result, rec)).toBe(result)
    expect(recordOf(result)).toBe(rec)
    expect(recordOf({ ...result })).toBeUndefined()
    expect(recordOf(structuredClone(result))).toBeUndefined()
    expect(recordOf(new Proxy(result, {}))).toBeUndefined()
    expect(recordOf(Object.create(result) as object)).toBeUndefined()
  })

  test('leave no own key, symbol or property on the result', () => {
    const result = { contexts: [], variables: {} }
    const before = Reflect.ownKeys(result)
    withRecord(result, record(undefined))
    expect(Reflect.ownKeys(result)).toEqual(before)
    expect(Object.getOwnPropertySymbols(result)).toEqual([])
    expect(JSON.stringify(result)).toBe('{"contexts":[],"variables":{}}')
  })

  test('a second record replaces the first, as a map entry would', () => {
    const result = { contexts: [] }
    const second = record(undefined)
    withRecord(result, record(undefined))
    withRecord(result, second)
    expect(recordOf(result)).toBe(second)
  })

  test('recordOf answers undefined for primitives and objects never recorded', () => {
    expect(recordOf(1 as unknown as object)).toBeUndefined()
    expect(recordOf(null as unknown as object)).toBeUndefined()
    expect(recordOf({})).toBeUndefined()
    expect(recordOf(() => {})).toBeUndefined()
  })

})

describe('the scope of a contexts array', () => {
  test('a shallow spread of a result shares its stamped contexts array, so it knows the scope', () => {
    const scope = { name: 'agent' }
    const contexts: object[] = []
    recordScope(contexts, scope)
    expect(assembledFor({ ...{ contexts } })).toEqual({ scope })
    expect(Reflect.ownKeys(contexts)).toEqual(['length'])
  })

  test('a copied array, a non-object or an unstamped array knows no scope', () => {
    const contexts: object[] = []
    recordScope(contexts, { name: 'agent' })
    expect(assembledFor({ contexts: [...contexts] })).toBeUndefined()
    expect(assembledFor({ contexts: 'x' as unknown as object })).toBeUndefined()
    expect(assembledFor({ contexts: [] })).toBeUndefined()
  })

  test('the result record wins over the contexts array', () => {
    const contexts: object[] = []
    recordScope(contexts, { name: 'other' })
    const result = withRecord({ contexts }, record(undefined))
    expect(assembledFor(result)).toEqual({ scope: undefined })
  })
})
