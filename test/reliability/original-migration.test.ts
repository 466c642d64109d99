import { describe, expect, test } from 'vitest'
import {
  PERSONA_PREFIX_SECTION,
  renderPrompt,
  SECTION_ORDERS,
  type AssembledContext,
  type PromptPresentation,
  type ToolSchema,
} from '../../src/index.js'
import { mintScope, mount } from '../assembly/system-prompt.fixtures.js'

// What a plugin written for the original harness meets when it moves to
// promptloom, as docs/migration.md describes it.

const ORIGINAL_IDENTITY = 'You are an AI agent powered by DeepSeek Harness.'

const bash: ToolSchema = { name: 'bash', description: 'Run a shell command.', parameters: { type: 'object', properties: {} } }

describe('the identity text', () => {
  test('differs from the original by default, so every prompt starts with other bytes', async () => {
    const app = await mount()
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe('You are an AI agent.')
  })

  test('config identity restores the original first bytes', async () => {
    const app = await mount({ identity: ORIGINAL_IDENTITY, personaPrefix: 'You review code.' })
    expect(renderPrompt(await app.systemPrompt.assemble())).toBe(`${ORIGINAL_IDENTITY}\n\nYou review code.`)
  })
})

describe('result shapes', () => {
  test('sections carry order (and complete, interpolate when set), contexts registered: true', async () => {
    const app = await mount({ includeHarnessIdentity: false })
    app.systemPrompt.section({ name: 'rules', order: 500, text: 'Be brief.' })
    app.systemPrompt.context({ name: 'cwd', order: 110, text: '/repo' })
    const assembly = await app.systemPrompt.assemble()
    expect(assembly.sections.find((section) => section.name === 'rules')).toEqual({ name: 'rules', order: 500, text: 'Be brief.' })
    expect(assembly.contexts).toEqual([{ name: 'cwd', text: '/repo', registered: true }])
  })

  test('an original-style toEqual on { name, text } fails, and toMatchObject or a projection passes', async () => {
    const app = await mount({ includeHarnessIdentity: false })
    app.systemPrompt.section({ name: 'rules', order: 500, text: 'Be brief.' })
    app.systemPrompt.context({ name: 'cwd', order: 110, text: '/repo' })
    const assembly = await app.systemPrompt.assemble()
    const rules = assembly.sections.filter((section) => section.name === 'rules')
    expect(rules).not.toEqual([{ name: 'rules', text: 'Be brief.' }])
    expect(rules).toMatchObject([{ name: 'rules', text: 'Be brief.' }])
    expect(rules.map(({ name, text }) => ({ name, text }))).toEqual([{ name: 'rules', text: 'Be brief.' }])
    expect(assembly.contexts).toMatchObject([{ name: 'cwd', text: '/repo' }])
  })
})

describe('contexts a listener rebuilds', () => {
  async function refreshedAfter(rebuild: (entry: AssembledContext) => AssembledContext): Promise<string[]> {
    const app = await mount({ includeHarnessIdentity: false })
    let now = 'v1'
    app.systemPrompt.context({ name: 'clock', order: 1, text: () => now })
    app.on('system-prompt/prepare', async (_preparation, _context, next) => {
      const prepared = await next()
      return { ...prepared, contexts: prepared.contexts.map(rebuild) }
    })
    const accepted = await app.systemPrompt.assemble()
    now = 'v2'
    return app.systemPrompt.refreshContext(accepted).contexts.map((entry) => entry.text)
  }

  test('as plain { name, text } objects are kept at their accepted text by refreshContext (registered is gone)', async () => {
    expect(await refreshedAfter(({ name, text }) => ({ name, text }))).toEqual(['v1'])
  })

  test('spread with their other fields are read again by refreshContext', async () => {
    expect(await refreshedAfter((entry) => ({ ...entry, text: entry.text.trim() }))).toEqual(['v2'])
  })
})

describe('tools are provider-owned', () => {
  test('an assemble listener that rewrites tools changes nothing', async () => {
    const app = await mount()
    app.systemPrompt.tools(() => ({ schemas: [bash] }))
    app.on('system-prompt/assemble', async (presentation, _context, next) => {
      const withTools = presentation as PromptPresentation & { tools?: ToolSchema[] }
      withTools.tools = (withTools.tools ?? []).map((tool) => ({ ...tool, description: 'rewritten' }))
      return next()
    })
    expect((await app.systemPrompt.assemble()).tools).toEqual([bash])
  })

  test("a tool provided from the agent's scope gives that agent its own description", async () => {
    const app = await mount()
    const agent = { name: 'reviewer' }
    const other = { name: 'writer' }
    const scope = await mintScope(app, agent)
    const otherScope = await mintScope(app, other)
    otherScope.ctx.systemPrompt.tools(() => ({ schemas: [bash] }))
    scope.ctx.systemPrompt.tools(() => ({ schemas: [{ ...bash, description: `${bash.description} Never modify files.` }] }))
    const [mine, theirs] = await Promise.all([app.systemPrompt.assemble({ scope: agent }), app.systemPrompt.assemble({ scope: other })])
    expect([mine.tools.map((tool) => tool.description), theirs.tools.map((tool) => tool.description)]).toEqual([
      ['Run a shell command. Never modify files.'],
      ['Run a shell command.'],
    ])
  })

  test('a scoped provider cannot shadow a global tool of the same name: the assembly fails', async () => {
    const app = await mount()
    const agent = { name: 'reviewer' }
    const scope = await mintScope(app, agent)
    app.systemPrompt.tools(() => ({ schemas: [bash] }))
    scope.ctx.systemPrompt.tools(() => ({ schemas: [{ ...bash, description: 'Never modify files.' }] }))
    await expect(app.systemPrompt.assemble({ scope: agent })).rejects.toThrow('tool "bash" is provided more than once')
  })

  test('one global provider can describe a tool per scope from its assemble context', async () => {
    const app = await mount()
    const agent = { name: 'reviewer' }
    const readOnly = new WeakSet<object>([agent])
    app.systemPrompt.tools((context) => ({
      schemas: [context.scope !== undefined && readOnly.has(context.scope) ? { ...bash, description: 'Run a read-only command.' } : bash],
    }))
    const [mine, global] = await Promise.all([app.systemPrompt.assemble({ scope: agent }), app.systemPrompt.assemble()])
    expect([mine.tools[0]!.description, global.tools[0]!.description]).toEqual(['Run a read-only command.', 'Run a shell command.'])
  })
})

describe('the 0.1.1-era persona contract', () => {
  test('config persona fails at load, naming the key', async () => {
    await expect(mount({ persona: 'You review code.' } as never)).rejects.toThrow('unknown systemPrompt config key "persona"')
  })

  test('a scoped deployment:persona section shadows nothing: both persona texts render (same order, so by name)', async () => {
    const app = await mount({ personaPrefix: 'You are helpful.' })
    const agent = { name: 'reviewer' }
    const scope = await mintScope(app, agent)
    scope.ctx.systemPrompt.section({ name: 'deployment:persona', order: 0, text: 'You review code.' })
    expect(renderPrompt(await app.systemPrompt.assemble({ scope: agent }))).toBe('You are an AI agent.\n\nYou review code.\n\nYou are helpful.')
  })

  test('a scoped PERSONA_PREFIX_SECTION at DEPLOYMENT_PERSONA_PREFIX replaces the deployment persona for that agent', async () => {
    const app = await mount({ personaPrefix: 'You are helpful.' })
    const agent = { name: 'reviewer' }
    const scope = await mintScope(app, agent)
    scope.ctx.systemPrompt.section({ name: PERSONA_PREFIX_SECTION, order: SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX, text: 'You review code.' })
    expect([
      renderPrompt(await app.systemPrompt.assemble({ scope: agent })),
      renderPrompt(await app.systemPrompt.assemble()),
    ]).toEqual(['You are an AI agent.\n\nYou review code.', 'You are an AI agent.\n\nYou are helpful.'])
  })
})
