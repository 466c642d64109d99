import { createRequire } from 'node:module'
import { signal as appSignal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import { isReadonlySignal, signal, type SystemPrompt } from '../../src/index.js'
import { BARE, mintScope, mount, tool } from '../assembly/system-prompt.fixtures.js'

// A second copy of the reactive runtime, as an app gets it when CommonJS code
// calls require('@preact/signals-core') beside the ESM import promptloom uses:
// the package's CommonJS build, a different module with its own Signal class.
const foreign = createRequire(import.meta.url)('@preact/signals-core') as typeof import('@preact/signals-core')

const REMEDY = /import signal .*from 'promptloom', or dedupe @preact\/signals-core/

describe('a signal of another copy of @preact/signals-core', () => {
  test('is a different runtime here, carrying the same brand (the premise of these tests)', () => {
    const other = foreign.signal('x')
    expect(foreign.Signal).not.toBe(signal(0).constructor)
    expect((other as unknown as { brand: unknown }).brand).toBe(Symbol.for('preact-signals'))
  })

  test('is not a signal promptloom can track; its own and the re-exported ones are', () => {
    expect(isReadonlySignal(foreign.signal('x'))).toBe(false)
    expect(isReadonlySignal(foreign.computed(() => 'x'))).toBe(false)
    expect(isReadonlySignal(appSignal('x'))).toBe(true)
    expect(isReadonlySignal(signal('x'))).toBe(true)
  })

  const REGISTRATIONS: [string, string, (sp: SystemPrompt) => unknown][] = [
    ['a section text', 'prompt section "branch" text', (sp) => sp.section({ name: 'branch', order: 1, text: foreign.signal('main') })],
    ['a context text', 'runtime context "git" text', (sp) => sp.context({ name: 'git', order: 1, text: foreign.computed(() => 'clean') })],
    ['a variable value', 'prompt variable "cwd" value', (sp) => sp.variable('cwd', foreign.signal<string | undefined>('/work'))],
    ['a tool provider', 'tool provider', (sp) => sp.tools(foreign.signal({ schemas: [tool('read')] }))],
  ]

  test.each(REGISTRATIONS)('as %s is refused at registration with a TypeError naming the entry and the remedy', async (_what, subject, register) => {
    const app = await mount(BARE)
    const before = app.systemPrompt.inspect()
    const error = (() => {
      try {
        register(app.systemPrompt)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message.startsWith(`${subject} is a signal of another copy of @preact/signals-core`)).toBe(true)
    expect((error as Error).message).toMatch(REMEDY)
    expect(app.systemPrompt.inspect()).toEqual(before)
  })

  test('registered through a scope, the error names the scope', async () => {
    const app = await mount(BARE)
    const scope = await mintScope(app, { name: 'agent-1' })
    expect(() => scope.ctx.systemPrompt.section({ name: 'branch', order: 1, text: foreign.signal('main') })).toThrowError(
      /^prompt section "branch" in scope "agent-1" text is a signal of another copy/,
    )
  })

  test("the app's own signal still drives system-prompt/change", async () => {
    const app = await mount(BARE)
    const branch = appSignal('main')
    app.systemPrompt.section({ name: 'branch', order: 1, text: branch })
    let changes = 0
    app.on('system-prompt/change', () => void changes++)
    branch.value = 'dev'
    expect(changes).toBe(1)
  })
})
