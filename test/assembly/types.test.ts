import { Context } from 'cordis'
import { describe, expect, expectTypeOf, test } from 'vitest'
import {
  scopeTarget,
  SystemPrompt,
  type AssembleContext,
  type PromptAssembly,
  type PromptInspection,
  type PromptPreparation,
  type PromptPresentation,
  type PromptContextOrderName,
  type PromptSectionOrderName,
  type PromptStats,
  type RegistrationDisposer,
  type Scope,
  type Scoped,
  type ScopedLayers,
  type ScopeLayer,
  type ToolSchema,
} from '../../src/index.js'
import { BARE, mount } from './system-prompt.fixtures.js'

// Compile-time tests of the SystemPrompt events and service surface:
// `npm run typecheck` covers test/, so every `@ts-expect-error` below must
// stay an error for the type check to pass.

declare module '../../src/assembly/types.js' {
  interface AssembleContext {
    /** Declared here to prove that AssembleContext is merge-extensible. */
    typesTestAgent?: string
  }
}

const presentation = (): PromptPresentation => ({ sections: [], contexts: [], variables: {} })
const preparation = (): PromptPreparation => ({ contexts: [], variables: {} })

describe('scope-filtered waterfall dispatch', () => {
  test('dispatching system-prompt/assemble with a bare service is a type error', async () => {
    const app = await mount(BARE)
    const bare: SystemPrompt = app.systemPrompt
    const run = () =>
      // @ts-expect-error the event declares `this: Scoped<SystemPrompt>`
      app.waterfall(bare, 'system-prompt/assemble', presentation(), {}, async () => presentation())
    await expect(run()).resolves.toEqual(presentation())
  })

  test('dispatching system-prompt/prepare with a plain object is a type error', async () => {
    const app = await mount(BARE)
    const run = () =>
      // @ts-expect-error a plain object carries no scope brand
      app.waterfall({}, 'system-prompt/prepare', preparation(), {}, async () => preparation())
    await expect(run()).resolves.toEqual(preparation())
  })

  test('dispatching with a scopeTarget carrier compiles and reaches the scope’s listeners', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent' }
    const carrier = scopeTarget(app.systemPrompt, key)
    expectTypeOf(carrier).toEqualTypeOf<Scoped<SystemPrompt>>()
    const heard: string[] = []
    app.on('system-prompt/assemble', async (value, context, next) => {
      heard.push('unscoped')
      return next()
    })
    const result = app.waterfall(carrier, 'system-prompt/assemble', presentation(), { scope: key }, async () =>
      presentation(),
    )
    expectTypeOf(result).toEqualTypeOf<Promise<PromptPresentation>>()
    await result
    expect(heard).toEqual(['unscoped'])
  })

  test('the waterfall arguments are typed', async () => {
    const app = await mount(BARE)
    const carrier = scopeTarget(app.systemPrompt, undefined)
    const run = () =>
      // @ts-expect-error a preparation is not a presentation (no sections)
      app.waterfall(carrier, 'system-prompt/assemble', preparation(), {}, async () => presentation())
    await expect(run()).resolves.toBeDefined()
  })
})

describe('listener signatures', () => {
  test('a system-prompt/assemble listener is typed', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/assemble', async function (value, context, next) {
      expectTypeOf(this).toEqualTypeOf<Scoped<SystemPrompt>>()
      expectTypeOf(value).toEqualTypeOf<PromptPresentation>()
      expectTypeOf(context).toEqualTypeOf<AssembleContext>()
      expectTypeOf(next).toEqualTypeOf<() => Promise<PromptPresentation>>()
      return next()
    })
    await app.systemPrompt.assemble()
  })

  test('a system-prompt/prepare listener is typed', async () => {
    const app = await mount(BARE)
    app.on('system-prompt/prepare', async function (value, context, next) {
      expectTypeOf(this).toEqualTypeOf<Scoped<SystemPrompt>>()
      expectTypeOf(value).toEqualTypeOf<PromptPreparation>()
      expectTypeOf(context).toEqualTypeOf<AssembleContext>()
      expectTypeOf(next).toEqualTypeOf<() => Promise<PromptPreparation>>()
      return next()
    })
    await app.systemPrompt.prepare()
  })

  test('a waterfall listener must resolve to the waterfall value', () => {
    const app = new Context()
    // @ts-expect-error a listener resolving to a number is not a presentation listener
    app.on('system-prompt/assemble', async () => 42)
    // @ts-expect-error a synchronous listener does not return a promise
    app.on('system-prompt/prepare', (value: PromptPreparation) => value)
  })

  test('a system-prompt/change listener takes no arguments', () => {
    const app = new Context()
    app.on('system-prompt/change', () => {})
    // @ts-expect-error the change event carries no payload
    app.on('system-prompt/change', (name: string) => void name)
  })

  test('system-prompt/change is emitted without a carrier', () => {
    const app = new Context()
    let heard = 0
    app.on('system-prompt/change', () => void heard++)
    app.emit('system-prompt/change')
    expect(heard).toBe(1)
  })
})

describe('service surface', () => {
  test('registration methods return a Cordis disposer, typed as what it returns', async () => {
    const app = await mount(BARE)
    expectTypeOf(app.systemPrompt.section).returns.toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf(app.systemPrompt.context).returns.toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf(app.systemPrompt.variable).returns.toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf(app.systemPrompt.tools).returns.toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf(app.systemPrompt.suppressRuntimeContext).returns.toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf<RegistrationDisposer>().toEqualTypeOf<() => Promise<void> | undefined>()
    // The scope primitives hand out Cordis disposers too, which may return undefined.
    expectTypeOf<ReturnType<ScopedLayers<ScopeLayer>['effect']>>().toEqualTypeOf<RegistrationDisposer>()
    expectTypeOf<Scope['rawDispose']>().toEqualTypeOf<RegistrationDisposer>()
    const dispose = app.systemPrompt.section({ name: 'a', order: 0, text: 'A' })
    // @ts-expect-error the disposer may return undefined: await it instead of chaining
    expect(() => dispose().then(() => {})).toThrow(TypeError)
  })

  test('texts accept a string, a signal or a function of the assemble context, and nothing else', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 0, text: (context) => String(context.scope) })
    // @ts-expect-error a number is not a text source
    expect(() => app.systemPrompt.section({ name: 'b', order: 0, text: 42 })).toThrow(TypeError)
    // @ts-expect-error a context needs an order
    expect(() => app.systemPrompt.context({ name: 'c', text: 'x' })).toThrow(TypeError)
  })

  test('a variable provider may yield undefined but not a number', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('a', () => undefined)
    // @ts-expect-error a variable value must be a string or undefined
    app.systemPrompt.variable('b', () => 42)
  })

  test('a tool provider returns schemas with name, description and parameters', async () => {
    const app = await mount(BARE)
    app.systemPrompt.tools(() => ({ schemas: [{ name: 'bash', description: 'run', parameters: {} }] }))
    // @ts-expect-error a schema needs a description and parameters
    const dispose = app.systemPrompt.tools(() => ({ schemas: [{ name: 'read' }] }))
    await dispose()
    expectTypeOf((await app.systemPrompt.assemble()).tools).toEqualTypeOf<ToolSchema[]>()
  })

  test('order band lookups name the built-in bands and accept configured ones (checked at run time)', async () => {
    const app = await mount(BARE)
    expectTypeOf(app.systemPrompt.getSectionOrder('TOOLS_SDK')).toEqualTypeOf<number>()
    expectTypeOf(app.systemPrompt.getSectionOrder).parameter(0).toEqualTypeOf<PromptSectionOrderName | (string & {})>()
    expectTypeOf(app.systemPrompt.getContextOrder).parameter(0).toEqualTypeOf<PromptContextOrderName | (string & {})>()
    expectTypeOf<'SANDBOX_POLICY'>().not.toMatchTypeOf<PromptSectionOrderName>()
    expectTypeOf<'TOOLS_SDK'>().not.toMatchTypeOf<PromptContextOrderName>()
    expect(() => app.systemPrompt.getSectionOrder('SANDBOX_POLICY')).toThrow(TypeError)
    expect(() => app.systemPrompt.getContextOrder('TOOLS_SDK')).toThrow(TypeError)
  })

  test('prepare, assemble and refreshContext are typed', async () => {
    const app = await mount(BARE)
    const prepared = await app.systemPrompt.prepare()
    expectTypeOf(prepared).toEqualTypeOf<PromptPreparation>()
    const assembly = await app.systemPrompt.assemble({}, prepared)
    expectTypeOf(assembly).toEqualTypeOf<PromptAssembly>()
    expectTypeOf(app.systemPrompt.refreshContext(assembly)).toEqualTypeOf<PromptAssembly>()
    expectTypeOf(app.systemPrompt.refreshContext(prepared)).toEqualTypeOf<PromptPreparation>()
  })

  test('AssembleContext is merge-extensible', async () => {
    const app = await mount(BARE)
    const seen: (string | undefined)[] = []
    app.systemPrompt.section({ name: 'a', order: 0, text: (context) => (seen.push(context.typesTestAgent), 'A') })
    await app.systemPrompt.assemble({ typesTestAgent: 'agent-7' })
    expect(seen).toEqual(['agent-7'])
  })

  test('stats() and inspect() are typed', async () => {
    const app = await mount(BARE)
    expectTypeOf(app.systemPrompt.stats()).toEqualTypeOf<PromptStats>()
    expectTypeOf(app.systemPrompt.inspect()).toEqualTypeOf<PromptInspection>()
  })
})
