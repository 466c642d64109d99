import { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createScope, scopeOf } from '../../src/index.js'
import { SCOPE_TAG, scopeLabel } from '../../src/scope/scope-key.js'

describe('scopeOf', () => {
  test('is undefined for an unscoped context', () => {
    expect(scopeOf(new Context())).toBeUndefined()
  })

  test('reads the tag stored under SCOPE_TAG', () => {
    const key = {}
    expect(scopeOf({ [SCOPE_TAG]: key })).toBe(key)
  })

  test('returns the key of the scope a context was minted for', () => {
    const key = { name: 'agent' }
    expect(scopeOf(createScope(new Context(), key).ctx)).toBe(key)
  })
})

describe('scopeLabel', () => {
  test('uses a non-empty string name', () => {
    expect(scopeLabel({ name: 'planner', id: 7 })).toBe('planner')
  })

  test('falls back to a string id', () => {
    expect(scopeLabel({ id: 'agent-1' })).toBe('agent-1')
  })

  test('falls back to a numeric id', () => {
    expect(scopeLabel({ name: '', id: 7 })).toBe('7')
  })

  test('gives an anonymous key a stable serial', () => {
    const key = {}
    const first = scopeLabel(key)
    expect(first).toMatch(/^scope#\d+$/)
    expect(scopeLabel(key)).toBe(first)
  })

  test('gives different anonymous keys different serials', () => {
    expect(scopeLabel({})).not.toBe(scopeLabel({}))
  })
})
