import { computed, signal } from '@preact/signals-core'
import { describe, expect, test, vi } from 'vitest'
import { bindScopeParent, effect, renderContextSnapshot, renderPrompt, type PromptDiagnostic } from '../../src/index.js'
import { BARE, mintScope, mount } from './system-prompt.fixtures.js'

// SPEC §5 "Reactive diagnostics": the render errors a registry would meet,
// before the first step, memoized and kept current by the signal graph.

const brief = (list: readonly PromptDiagnostic[]) => list.map((d) => [d.kind, d.entry, d.variable])

async function renderError(run: () => Promise<unknown>): Promise<string> {
  try {
    await run()
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('the render did not fail')
}

describe('diagnostics() findings', () => {
  test('a clean registry has no findings', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('user', 'Ada')
    app.systemPrompt.section({ name: 'hi', order: 1, text: 'Hi {{user}}' })
    expect(app.systemPrompt.diagnostics()).toEqual([])
  })

  test('a scope key is read only to label a finding (SPEC Reliability: opaque keys)', async () => {
    const app = await mount(BARE)
    let reads = 0
    const key = new Proxy({ name: 'agent-1' }, { get: (target, property) => (reads++, Reflect.get(target, property)) })
    const scope = await mintScope(app, key)
    scope.ctx.systemPrompt.variable('user', 'Ada')
    scope.ctx.systemPrompt.section({ name: 'hi', order: 1, text: 'Hi {{user}}' })
    scope.ctx.systemPrompt.context({ name: 'cwd', order: 1, text: 'in /work' })
    expect(app.systemPrompt.diagnostics(key, { includeUnchecked: true })).toEqual([])
    expect(reads).toBe(0)
    scope.ctx.systemPrompt.section({ name: 'notes', order: 2, text: 'see {{ cwd }}' })
    expect(app.systemPrompt.diagnostics(key)[0]!.message).toContain('in scope "agent-1"')
    expect(reads).toBeGreaterThan(0)
  })

  test('a malformed reference reads exactly like the render error it predicts', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'notes', order: 1, text: 'see {{ cwd }}' })
    const [finding] = app.systemPrompt.diagnostics()
    expect(finding).toEqual({ kind: 'malformed', entry: 'notes', entryKind: 'section', layer: 'global', message: expect.any(String) })
    expect(finding!.message).toBe(await renderError(async () => renderPrompt(await app.systemPrompt.assemble())))
  })

  test('an unknown variable in a scoped section reads like the render error, listing the registered variables', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1' }
    const scope = await mintScope(app, key)
    app.systemPrompt.variable('user', 'Ada')
    scope.ctx.systemPrompt.section({ name: 'task', order: 1, text: 'on {{branch}}' })
    const [finding] = app.systemPrompt.diagnostics(key)
    expect([finding!.kind, finding!.layer, finding!.variable]).toEqual(['unknown-variable', key, 'branch'])
    expect(finding!.message).toBe(await renderError(async () => renderPrompt(await app.systemPrompt.assemble({ scope: key }))))
  })

  test('a signal variable holding undefined is no-value, like the render error', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('branch', signal<string | undefined>(undefined))
    app.systemPrompt.context({ name: 'git', order: 1, text: 'branch {{branch}}' })
    const [finding] = app.systemPrompt.diagnostics()
    expect([finding!.kind, finding!.entryKind, finding!.variable]).toEqual(['no-value', 'context', 'branch'])
    expect(finding!.message).toBe(await renderError(async () => renderContextSnapshot(await app.systemPrompt.assemble())))
  })

  test('a function variable is never no-value, and its provider is never called', async () => {
    const app = await mount(BARE)
    const provider = vi.fn(() => undefined)
    app.systemPrompt.variable('branch', provider)
    app.systemPrompt.section({ name: 'git', order: 1, text: '{{branch}}' })
    const before = app.systemPrompt.stats().providerEvaluations
    expect(app.systemPrompt.diagnostics()).toEqual([])
    expect(provider).not.toHaveBeenCalled()
    expect(app.systemPrompt.stats().providerEvaluations).toBe(before)
  })

  test('a function text is never called; it is listed as unchecked only when asked', async () => {
    const app = await mount(BARE)
    const text = vi.fn(() => '{{nope}}')
    app.systemPrompt.section({ name: 'late', order: 1, text })
    expect(app.systemPrompt.diagnostics()).toEqual([])
    expect(app.systemPrompt.diagnostics(undefined, { includeUnchecked: true })).toEqual([
      { kind: 'unchecked', entry: 'late', entryKind: 'section', layer: 'global', message: expect.stringContaining('prompt section "late" text is a function provider') },
    ])
    expect(text).not.toHaveBeenCalled()
  })

  test('a volatile variable in a section is a volatile-in-section hazard worded like the guard error', async () => {
    const app = await mount({ ...BARE, stabilityGuard: 'error' })
    app.systemPrompt.variable('clock', () => 'now', { stability: 'volatile' })
    app.systemPrompt.section({ name: 'status', order: 1, text: '{{clock}}' })
    app.systemPrompt.section({ name: 'tail', order: 2, text: '{{clock}}', stability: 'volatile' })
    app.systemPrompt.context({ name: 'time', order: 1, text: '{{clock}}' })
    const found = app.systemPrompt.diagnostics()
    expect(brief(found)).toEqual([['volatile-in-section', 'status', 'clock']])
    expect(found[0]!.message).toBe(await renderError(async () => renderPrompt(await app.systemPrompt.assemble())))
  })

  test("under 'warn' the hazard says the surface warns about it", async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('clock', () => 'now', { stability: 'volatile' })
    app.systemPrompt.section({ name: 'status', order: 1, text: '{{clock}}' })
    expect(app.systemPrompt.diagnostics()[0]!.message).toContain("which the step surface warns about (config stabilityGuard 'warn'")
  })

  test('every problem of a text is listed once, in text order (a render stops at the first)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{a}} {{ b }} {{a}} {{c}} {{ b }} {{}}' })
    expect(brief(app.systemPrompt.diagnostics())).toEqual([
      ['unknown-variable', 'x', 'a'],
      ['malformed', 'x', undefined],
      ['unknown-variable', 'x', 'c'],
      ['malformed', 'x', undefined],
    ])
  })

  test('interpolate: false texts, suppressed optional contexts and shadowed entries are not checked', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1' }
    const scope = await mintScope(app, key)
    app.systemPrompt.section({ name: 'lit', order: 1, text: '{{ raw }}', interpolate: false })
    app.systemPrompt.section({ name: 'task', order: 2, text: '{{gone}}' })
    scope.ctx.systemPrompt.section({ name: 'task', order: 2, text: 'fine' })
    app.systemPrompt.context({ name: 'opt', order: 1, text: '{{nope}}' })
    app.systemPrompt.context({ name: 'req', order: 2, text: '{{nope}}', required: true })
    scope.ctx.systemPrompt.suppressRuntimeContext()
    expect(brief(app.systemPrompt.diagnostics(key))).toEqual([['unknown-variable', 'req', 'nope']])
    expect(brief(app.systemPrompt.diagnostics())).toEqual([
      ['unknown-variable', 'task', 'gone'],
      ['unknown-variable', 'opt', 'nope'],
      ['unknown-variable', 'req', 'nope'],
    ])
  })
})

describe('diagnostics() memoization', () => {
  test('an unchanged registry returns the same frozen array', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{nope}}' })
    const first = app.systemPrompt.diagnostics()
    expect(app.systemPrompt.diagnostics()).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.isFrozen(first[0])).toBe(true)
  })

  test('a registration that fixes the reference updates the findings; one that breaks it again, too', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{nope}}' })
    const broken = app.systemPrompt.diagnostics()
    const dispose = app.systemPrompt.variable('nope', 'fixed')
    expect(app.systemPrompt.diagnostics()).toEqual([])
    dispose()
    expect(brief(app.systemPrompt.diagnostics())).toEqual(brief(broken))
  })

  test('an unrelated registration keeps the same array (equal findings are not re-issued)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{nope}}' })
    const first = app.systemPrompt.diagnostics()
    app.systemPrompt.section({ name: 'y', order: 2, text: 'plain' })
    expect(app.systemPrompt.diagnostics()).toBe(first)
  })

  test('a signal text and a signal variable keep it current', async () => {
    const app = await mount(BARE)
    const text = signal('{{who}}')
    const who = signal<string | undefined>('Ada')
    app.systemPrompt.variable('who', who)
    app.systemPrompt.section({ name: 'x', order: 1, text })
    expect(app.systemPrompt.diagnostics()).toEqual([])
    who.value = undefined
    expect(brief(app.systemPrompt.diagnostics())).toEqual([['no-value', 'x', 'who']])
    text.value = '{{ who }}'
    expect(brief(app.systemPrompt.diagnostics())).toEqual([['malformed', 'x', undefined]])
    text.value = 'plain'
    expect(app.systemPrompt.diagnostics()).toEqual([])
  })

  test('a throwing signal text is skipped, and no error is cached', async () => {
    const app = await mount(BARE)
    const fail = signal(true)
    app.systemPrompt.section({
      name: 'x',
      order: 1,
      text: computed(() => {
        if (fail.value) throw new Error('not yet')
        return '{{nope}}'
      }),
    })
    expect(app.systemPrompt.diagnostics()).toEqual([])
    fail.value = false
    expect(brief(app.systemPrompt.diagnostics())).toEqual([['unknown-variable', 'x', 'nope']])
  })

  test('a parent re-link updates a scope’s findings', async () => {
    const app = await mount(BARE)
    const preset = { name: 'preset' }
    const other = { name: 'other' }
    const agent = { name: 'agent' }
    const presetScope = await mintScope(app, preset)
    await mintScope(app, other)
    presetScope.ctx.systemPrompt.variable('team', 'core')
    const agentScope = await mintScope(app, agent, preset)
    agentScope.ctx.systemPrompt.section({ name: 'x', order: 1, text: '{{team}}' })
    expect(app.systemPrompt.diagnostics(agent)).toEqual([])
    await presetScope.dispose()
    expect(brief(app.systemPrompt.diagnostics(agent))).toEqual([['unknown-variable', 'x', 'team']])
  })

  test('a caller’s effect does not subscribe to the view (diagnostics read untracked)', async () => {
    const app = await mount(BARE)
    const runs = vi.fn()
    const stop = effect(() => {
      app.systemPrompt.diagnostics()
      runs()
    })
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{nope}}' })
    expect(runs).toHaveBeenCalledTimes(1)
    stop()
  })

  test('diagnostics of a 10,000-deep chain derive without overflowing the stack', async () => {
    const app = await mount(BARE)
    const keys = Array.from({ length: 10_000 }, (_, i) => ({ name: `s${i}` }))
    for (let i = 1; i < keys.length; i++) bindScopeParent(keys[i]!, keys[i - 1]!)
    app.systemPrompt.section({ name: 'x', order: 1, text: '{{nope}}' })
    expect(brief(app.systemPrompt.diagnostics(keys.at(-1)))).toEqual([['unknown-variable', 'x', 'nope']])
    app.systemPrompt.variable('nope', 'ok')
    expect(app.systemPrompt.diagnostics(keys.at(-1))).toEqual([])
  })
})
