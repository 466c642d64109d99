import { Context, Service } from 'cordis'
import { describe, expect, test } from 'vitest'
import {
  bindScopeParent,
  carrierKeyOf,
  createScope,
  isScopeCarrier,
  scopeTarget,
  type ScopeKey,
  type Scoped,
} from '../../src/index.js'

interface Subject {
  readonly kind: 'subject'
}

declare module 'cordis' {
  interface Events {
    'promptloom-test/carrier-ping'(this: Scoped<Subject>, payload: string): void
  }
}

const EVENT = 'promptloom-test/carrier-ping'

function subject(): Subject {
  return { kind: 'subject' }
}

/**
 * A root context with a listener registered from the root (untagged) and one
 * from a minted scope per given key; each listener logs its own label.
 */
function listeners(keys: Record<string, ScopeKey>) {
  const app = new Context()
  const log: string[] = []
  app.on(EVENT, () => void log.push('unscoped'))
  for (const [label, key] of Object.entries(keys)) {
    createScope(app, key).ctx.on(EVENT, () => void log.push(label))
  }
  return { app, log }
}

describe('scopeTarget', () => {
  test('admits a listener registered from an unscoped context', () => {
    const agent = {}
    const { app, log } = listeners({})
    app.emit(scopeTarget(subject(), agent), EVENT, 'hello')
    expect(log).toEqual(['unscoped'])
  })

  test('admits a listener tagged with the key itself', () => {
    const agent = {}
    const { app, log } = listeners({ agent })
    app.emit(scopeTarget(subject(), agent), EVENT, 'hello')
    expect(log).toEqual(['unscoped', 'agent'])
  })

  test('admits listeners tagged with each ancestor of the key (events flow up)', () => {
    const root = {}
    const preset = {}
    const agent = {}
    bindScopeParent(preset, root)
    bindScopeParent(agent, preset)
    const { app, log } = listeners({ root, preset })
    app.emit(scopeTarget(subject(), agent), EVENT, 'hello')
    expect(log).toEqual(['unscoped', 'root', 'preset'])
  })

  test('does not admit a listener tagged with a descendant (never down)', () => {
    const preset = {}
    const agent = {}
    bindScopeParent(agent, preset)
    const { app, log } = listeners({ agent })
    app.emit(scopeTarget(subject(), preset), EVENT, 'hello')
    expect(log).toEqual(['unscoped'])
  })

  test('does not admit a listener tagged with a sibling (never across)', () => {
    const preset = {}
    const agent = {}
    const sibling = {}
    bindScopeParent(agent, preset)
    bindScopeParent(sibling, preset)
    const { app, log } = listeners({ sibling })
    app.emit(scopeTarget(subject(), agent), EVENT, 'hello')
    expect(log).toEqual(['unscoped'])
  })

  test('does not admit a listener tagged with an unrelated key', () => {
    const { app, log } = listeners({ stranger: {} })
    app.emit(scopeTarget(subject(), {}), EVENT, 'hello')
    expect(log).toEqual(['unscoped'])
  })

  test('with key undefined admits untagged listeners only', () => {
    const { app, log } = listeners({ agent: {}, preset: {} })
    app.emit(scopeTarget(subject(), undefined), EVENT, 'hello')
    expect(log).toEqual(['unscoped'])
  })

  test('admits a listener tagged through a context derived with extend()', () => {
    const agent = {}
    const app = new Context()
    const log: string[] = []
    createScope(app, agent)
      .ctx.extend()
      .on(EVENT, () => void log.push('derived'))
    app.emit(scopeTarget(subject(), agent), EVENT, 'hello')
    expect(log).toEqual(['derived'])
  })

  test('judges the chain at dispatch time (follows a rebind made after the carrier)', () => {
    const agent = {}
    const other = {}
    const binding = bindScopeParent(agent, {})
    const carrier = scopeTarget(subject(), agent)
    const { app, log } = listeners({ other })
    binding.rebind(other)
    app.emit(carrier, EVENT, 'hello')
    expect(log).toEqual(['unscoped', 'other'])
  })

  test('lets a { global: true } listener of a non-ancestor scope bypass the filter', () => {
    const app = new Context()
    const log: string[] = []
    createScope(app, {}).ctx.on(EVENT, () => void log.push('global'), { global: true })
    app.emit(scopeTarget(subject(), {}), EVENT, 'hello')
    expect(log).toEqual(['global'])
  })

  test('lets a { global: true } listener bypass a key-undefined carrier', () => {
    const app = new Context()
    const log: string[] = []
    createScope(app, {}).ctx.on(EVENT, () => void log.push('global'), { global: true })
    app.emit(scopeTarget(subject(), undefined), EVENT, 'hello')
    expect(log).toEqual(['global'])
  })

  test("keeps the base's own filter (a base that rejects everything silences every listener)", () => {
    const agent = {}
    const base = { kind: 'subject' as const, [Context.filter]: () => false }
    const { app, log } = listeners({ agent })
    app.emit(scopeTarget(base, agent), EVENT, 'hello')
    expect(log).toEqual([])
  })

  test("lets a { global: true } listener bypass the base's own filter too", () => {
    const base = { kind: 'subject' as const, [Context.filter]: () => false }
    const app = new Context()
    const log: string[] = []
    app.on(EVENT, () => void log.push('global'), { global: true })
    app.emit(scopeTarget(base, {}), EVENT, 'hello')
    expect(log).toEqual(['global'])
  })

  test("combines the base's filter with the scope rule (both must admit)", () => {
    const agent = {}
    const admitted = new Set<object>()
    const app = new Context()
    const log: string[] = []
    const inAgent = createScope(app, agent).ctx
    const alsoInAgent = createScope(app, agent).ctx
    admitted.add(inAgent)
    const base = {
      kind: 'subject' as const,
      [Context.filter]: (ctx: Context) => admitted.has(ctx),
    }
    inAgent.on(EVENT, () => void log.push('admitted by base'))
    alsoInAgent.on(EVENT, () => void log.push('rejected by base'))
    app.on(EVENT, () => void log.push('unscoped, rejected by base'))
    app.emit(scopeTarget(base, agent), EVENT, 'hello')
    expect(log).toEqual(['admitted by base'])
  })

  test('hands listeners the carrier itself as this', () => {
    const carrier = scopeTarget(subject(), {})
    const app = new Context()
    const seen: unknown[] = []
    app.on(EVENT, function (this: Scoped<Subject>, payload) {
      seen.push(this, payload)
    })
    app.emit(carrier, EVENT, 'hello')
    expect(seen).toEqual([carrier, 'hello'])
  })

  test("exposes none of the base's properties (routing-only)", () => {
    const base = subject()
    const carrier = scopeTarget(base, {})
    expect(Object.getPrototypeOf(carrier)).toBeNull()
    expect('kind' in carrier).toBe(false)
    expect(Object.keys(carrier)).toEqual([])
  })

  test('cannot be given properties (frozen)', () => {
    const carrier = scopeTarget(subject(), {})
    expect(Object.isFrozen(carrier)).toBe(true)
  })

  test("calls the base's filter with the base as this", () => {
    const receivers: unknown[] = []
    const base = {
      kind: 'subject' as const,
      [Context.filter](this: unknown) {
        receivers.push(this)
        return true
      },
    }
    const { app } = listeners({})
    app.emit(scopeTarget(base, {}), EVENT, 'hello')
    expect(receivers).toEqual([base])
  })

  test("keeps a Cordis service's isolation filter (a listener in an isolated context is not admitted)", () => {
    class Subjects extends Service implements Subject {
      readonly kind = 'subject'
      constructor(ctx: Context) {
        super(ctx, 'carrierSubjects')
      }
    }
    const app = new Context()
    const log: string[] = []
    const service = new Subjects(app)
    app.on(EVENT, () => void log.push('same realm'))
    app.isolate('carrierSubjects').on(EVENT, () => void log.push('isolated'))
    app.emit(scopeTarget(service, {}), EVENT, 'hello')
    expect(log).toEqual(['same realm'])
  })

  test('leaves the base object untouched', () => {
    const base = subject()
    scopeTarget(base, {})
    expect(Reflect.ownKeys(base)).toEqual(['kind'])
  })
})

describe('isScopeCarrier', () => {
  test('recognises a carrier', () => {
    expect(isScopeCarrier(scopeTarget(subject(), {}))).toBe(true)
  })

  test('recognises a carrier with key undefined', () => {
    expect(isScopeCarrier(scopeTarget(subject(), undefined))).toBe(true)
  })

  test.each([
    ['a plain object', { kind: 'subject' }],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'carrier'],
    ['a function', () => {}],
  ])('rejects %s', (_label, value) => {
    expect(isScopeCarrier(value)).toBe(false)
  })

  test('rejects an object that merely inherits from a carrier', () => {
    expect(isScopeCarrier(Object.create(scopeTarget(subject(), {})))).toBe(false)
  })
})

describe('carrierKeyOf', () => {
  test('returns the key a carrier routes to', () => {
    const agent = {}
    expect(carrierKeyOf(scopeTarget(subject(), agent))).toBe(agent)
  })

  test('is undefined for an unscoped carrier', () => {
    expect(carrierKeyOf(scopeTarget(subject(), undefined))).toBeUndefined()
  })

  test('is undefined for a non-carrier', () => {
    expect(carrierKeyOf({ kind: 'subject' })).toBeUndefined()
  })
})
