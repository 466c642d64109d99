import { describe, expect, test } from 'vitest'
import { createStepSurface, render, renderPrompt, type SystemPromptConfig } from '../../src/index.js'
import { BARE, mintScope, mount } from '../assembly/system-prompt.fixtures.js'

// SPEC §5 "Stability guard": config stabilityGuard 'error' makes rendering a
// section (not itself volatile) that references a volatile variable fail; the
// mode travels in the assembly's provenance.

async function world(config: SystemPromptConfig) {
  const app = await mount({ ...BARE, ...config })
  const sp = app.systemPrompt
  sp.variable('clock', () => '12:00', { stability: 'volatile' })
  sp.variable('user', 'Ada')
  return app
}

describe("stabilityGuard: 'error'", () => {
  test('rendering a session section that references a volatile variable fails, naming section, variable and layer', async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.section({ name: 'status', order: 1, text: 'It is {{clock}}.' })
    const assembly = await app.systemPrompt.assemble()
    expect(() => render(assembly)).toThrow(
      `prompt section "status" references volatile prompt variable "clock" in the global layer, which config stabilityGuard 'error' forbids: a value that changes every step invalidates the cached prompt from this section on; move it into a runtime context (systemPrompt.context()), or into a tail section registered with stability: 'volatile'`,
    )
    expect(() => renderPrompt(assembly)).toThrow('references volatile prompt variable "clock"')
  })

  test('a scoped section and a scoped variable are named with their scopes', async () => {
    const app = await world({ stabilityGuard: 'error' })
    const key = { name: 'agent-1' }
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.variable('tick', () => '1', { stability: 'volatile' })
    scope.ctx.systemPrompt.section({ name: 'loop', order: 1, text: 'step {{tick}}' })
    const assembly = await app.systemPrompt.assemble({ scope: key })
    expect(() => render(assembly)).toThrow('prompt section "loop" in scope "agent-1" references volatile prompt variable "tick" in scope "agent-1"')
  })

  test("a section declared stability: 'volatile' may reference it", async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.section({ name: 'tail', order: 9, text: 'now {{clock}}', stability: 'volatile' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('now 12:00')
  })

  test('a runtime context may reference it (the guard is about the system prompt)', async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.context({ name: 'time', order: 1, text: 'time {{clock}}' })
    const assembly = await app.systemPrompt.assemble()
    expect(renderPrompt(assembly)).toBe('')
    expect(assembly.contexts.map((c) => c.name)).toEqual(['time'])
  })

  test('a section referencing only session variables renders', async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.section({ name: 'hello', order: 1, text: 'Hi {{user}}' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('Hi Ada')
  })

  test('the guard fails the step surface too, and the surface state stays as it was', async () => {
    const app = await world({ stabilityGuard: 'error' })
    const surface = createStepSurface()
    app.systemPrompt.section({ name: 'hello', order: 1, text: 'Hi' })
    surface.step({ assembly: await app.systemPrompt.assemble() })
    const dispose = app.systemPrompt.section({ name: 'status', order: 2, text: '{{clock}}' })
    const hazardous = await app.systemPrompt.assemble()
    expect(() => surface.step({ assembly: hazardous })).toThrow('config stabilityGuard')
    dispose()
    expect(surface.step({ assembly: await app.systemPrompt.assemble() }).step).toBe(2)
  })

  test('a cached render is guarded again on every call (the memo never hides the hazard)', async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.section({ name: 'status', order: 1, text: '{{clock}}' })
    const assembly = await app.systemPrompt.assemble()
    expect(() => render(assembly)).toThrow('config stabilityGuard')
    expect(() => render(assembly)).toThrow('config stabilityGuard')
  })
})

describe("stabilityGuard: 'warn' (default)", () => {
  test('renders, and the step surface warns once', async () => {
    const app = await world({})
    app.systemPrompt.section({ name: 'status', order: 1, text: 'It is {{clock}}.' })
    const surface = createStepSurface()
    const first = surface.step({ assembly: await app.systemPrompt.assemble() })
    expect(first.rendered.text).toBe('It is 12:00.')
    expect(first.warnings.flatMap((w) => ('section' in w ? [[w.kind, w.section, w.variable]] : []))).toEqual([['volatile-variable', 'status', 'clock']])
    expect(surface.step({ assembly: await app.systemPrompt.assemble() }).warnings).toEqual([])
  })

  test('two services with different guards render side by side (the mode is data, not a global)', async () => {
    const strict = await world({ stabilityGuard: 'error' })
    const lax = await world({ stabilityGuard: 'warn' })
    for (const app of [strict, lax]) app.systemPrompt.section({ name: 'status', order: 1, text: '{{clock}}' })
    const [a, b] = [await strict.systemPrompt.assemble(), await lax.systemPrompt.assemble()]
    expect(() => render(a)).toThrow('config stabilityGuard')
    expect(render(b).text).toBe('12:00')
  })

  test('a copy of a guarded assembly (no provenance) is not guarded', async () => {
    const app = await world({ stabilityGuard: 'error' })
    app.systemPrompt.section({ name: 'status', order: 1, text: '{{clock}}' })
    const assembly = await app.systemPrompt.assemble()
    expect(render({ ...assembly }).text).toBe('12:00')
  })
})
