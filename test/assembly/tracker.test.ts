/**
 * Pins the Cordis 4 traceable contract src/assembly/tracker.ts relies on, on
 * a real Context: a method read is unshadowed and looks up no associated
 * property while none is declared, and a declared `systemPrompt.<name>`
 * property still resolves through the service, exactly as Cordis does it.
 */
import { Context, Service } from 'cordis'
import { afterEach, describe, expect, test } from 'vitest'
import { SystemPrompt } from '../../src/index.js'

const ORIGINAL = Symbol.for('cordis.original')

interface ReflectHandler {
  get(target: object, prop: string | symbol, receiver: object): unknown
}

/** The static proxy handler of Cordis' (unexported) ReflectService, which serves every `ctx.<name>` read. */
function reflectHandlerOf(app: Context): ReflectHandler {
  const raw = (app.reflect as unknown as Record<symbol, { constructor: { handler: ReflectHandler } }>)[ORIGINAL]!
  return raw.constructor.handler
}

let restore: (() => void) | undefined
afterEach(() => {
  restore?.()
  restore = undefined
})

/** Counts `ctx.reflect` reads through Cordis' context proxy while `run` runs. */
function countReflectReads(app: Context, run: () => void): number {
  const handler = reflectHandlerOf(app)
  const original = handler.get
  let reads = 0
  handler.get = (target, prop, receiver) => {
    if (prop === 'reflect') reads++
    return original(target, prop, receiver)
  }
  restore = () => void (handler.get = original)
  try {
    run()
  } finally {
    restore()
    restore = undefined
  }
  return reads
}

async function loaded(): Promise<{ app: Context; sp: SystemPrompt }> {
  const app = new Context()
  await app.plugin(SystemPrompt)
  return { app, sp: app.systemPrompt }
}

describe('the systemPrompt service tracker', () => {
  test('hands out methods unshadowed: a method read is the prototype function itself', async () => {
    const { sp } = await loaded()
    expect(sp.assemble).toBe(SystemPrompt.prototype.assemble)
    expect(sp.section).toBe(SystemPrompt.prototype.section)
  })

  test('a method read does not read ctx.reflect while no systemPrompt.* property is declared', async () => {
    const { app, sp } = await loaded()
    expect(countReflectReads(app, () => void sp.assemble)).toBe(0)
  })

  test('a declared systemPrompt.* accessor is read through the service, and only while declared', async () => {
    const { app } = await loaded()
    const withdraw = app.reflect.accessor('systemPrompt.extra', { get: () => 42 })
    const sp = app.systemPrompt as unknown as Record<string, unknown>
    expect(sp.extra).toBe(42)
    // Cordis consults the reflect table again for this read, as it would without the tracker change.
    expect(countReflectReads(app, () => void sp.extra)).toBeGreaterThan(0)
    withdraw()
    expect(sp.extra).toBeUndefined()
    expect(countReflectReads(app, () => void sp.assemble)).toBe(0)
  })

  test('Cordis still keeps the tracker under Service.tracker with property "ctx"', async () => {
    const { sp } = await loaded()
    const raw = (sp as unknown as Record<symbol, Record<symbol, { property?: string; noShadow?: boolean; associate?: string }>>)[ORIGINAL]!
    const tracker = raw[Service.tracker]!
    expect(tracker.property).toBe('ctx')
    expect(tracker.noShadow).toBe(true)
    expect(tracker.associate).toBeUndefined()
  })
})
