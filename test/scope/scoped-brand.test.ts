import { Context } from 'cordis'
import { describe, expect, expectTypeOf, test } from 'vitest'
import {
  bindScopeParent,
  createScope,
  isScopeCarrier,
  scopeTarget,
  type ScopeKey,
  type ScopeParentBinding,
  type Scoped,
} from '../../src/index.js'

// Compile-time tests: `npm run typecheck` covers test/, so every
// `@ts-expect-error` below must stay an error for the type check to pass.

interface Subject {
  readonly kind: 'subject'
}

interface OtherSubject {
  readonly kind: 'other'
}

declare module 'cordis' {
  interface Events {
    'promptloom-test/brand-ping'(this: Scoped<Subject>, payload: string): void
  }
}

const EVENT = 'promptloom-test/brand-ping'

/** Stands for an API that only accepts a routing-only receiver. */
function route(target: Scoped<Subject>): Subject {
  return target
}

describe('Scoped<T> brand', () => {
  test('a bare object is not accepted where Scoped<T> is required', () => {
    const bare: Subject = { kind: 'subject' }
    // @ts-expect-error a bare subject carries no scope brand
    const target: Scoped<Subject> = bare
    expect(target).toBe(bare)
  })

  test('a bare object is not accepted as an argument typed Scoped<T>', () => {
    const bare: Subject = { kind: 'subject' }
    // @ts-expect-error a bare subject carries no scope brand
    expect(route(bare)).toBe(bare)
  })

  test('a scopeTarget carrier is accepted where Scoped<T> is required', () => {
    const carrier = scopeTarget<Subject>({ kind: 'subject' }, {})
    expect(route(carrier)).toBe(carrier)
  })

  test('scopeTarget returns Scoped of its base type', () => {
    expectTypeOf(scopeTarget({ kind: 'subject' } as Subject, undefined)).toEqualTypeOf<
      Scoped<Subject>
    >()
  })

  test('a carrier of another base type is not accepted', () => {
    const other = scopeTarget<OtherSubject>({ kind: 'other' }, {})
    // @ts-expect-error Scoped<OtherSubject> is not a Scoped<Subject>
    expect(() => route(other)).not.toThrow()
  })

  test('a carrier is still usable as its base type', () => {
    expectTypeOf<Scoped<Subject>>().toMatchTypeOf<Subject>()
  })

  test('dispatching a scope-filtered event with a bare subject is a type error', () => {
    const app = new Context()
    const heard: string[] = []
    app.on(EVENT, (payload) => void heard.push(payload))
    // @ts-expect-error the event declares `this: Scoped<Subject>`
    app.emit({ kind: 'subject' } as Subject, EVENT, 'bare')
    expect(heard).toEqual(['bare'])
  })

  test('dispatching a scope-filtered event with a carrier type-checks', () => {
    const app = new Context()
    const heard: string[] = []
    app.on(EVENT, (payload) => void heard.push(payload))
    app.emit(scopeTarget<Subject>({ kind: 'subject' }, undefined), EVENT, 'carried')
    expect(heard).toEqual(['carried'])
  })

  test('a listener of a scope-filtered event sees this as Scoped<T>', () => {
    const app = new Context()
    app.on(EVENT, function (payload) {
      expectTypeOf(this).toEqualTypeOf<Scoped<Subject>>()
      expectTypeOf(payload).toEqualTypeOf<string>()
    })
    app.emit(scopeTarget<Subject>({ kind: 'subject' }, undefined), EVENT, 'typed')
  })

  test('isScopeCarrier narrows unknown to Scoped<object>', () => {
    const value: unknown = scopeTarget<Subject>({ kind: 'subject' }, {})
    if (!isScopeCarrier(value)) throw new Error('expected a carrier')
    expectTypeOf(value).toEqualTypeOf<Scoped<object>>()
  })
})

describe('ScopeKey typing', () => {
  test('ScopeKey is any object', () => {
    expectTypeOf<{ name: string }>().toMatchTypeOf<ScopeKey>()
    expectTypeOf<string>().not.toMatchTypeOf<ScopeKey>()
  })

  test('createScope rejects a primitive key at compile time and at run time', () => {
    // @ts-expect-error a scope key must be an object
    expect(() => createScope(new Context(), 'agent')).toThrow(TypeError)
  })

  test('rebind accepts undefined to unlink', () => {
    const binding = bindScopeParent({}, {})
    expectTypeOf(binding).toEqualTypeOf<ScopeParentBinding>()
    expectTypeOf(binding.rebind).parameter(0).toEqualTypeOf<ScopeKey | undefined>()
  })
})
