import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import {
  createStepSurface,
  PERSONA_SUFFIX_SECTION,
  renderPrompt,
  SECTION_ORDERS,
  type PromptAssembly,
  type StabilityWarning,
  type StepInput,
  type StepResult,
  type SurfaceEvent,
  type ToolSchema,
} from '../../src/index.js'
import { BARE, mintScope, mount, tool } from '../assembly/system-prompt.fixtures.js'

type Plain = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

/** A plain assembly (no `assemble()` meta): sections as [name, text] pairs, in order. */
function plain(
  sections: readonly (readonly [string, string])[],
  extra: { contexts?: readonly (readonly [string, string])[]; tools?: ToolSchema[]; variables?: Record<string, string> } = {},
): Plain {
  return {
    sections: sections.map(([name, text], order) => ({ name, order, text })),
    contexts: (extra.contexts ?? []).map(([name, text]) => ({ name, text })),
    variables: extra.variables ?? {},
    tools: extra.tools ?? [],
  }
}

function typesOf(result: StepResult): SurfaceEvent['type'][] {
  return result.events.map((event) => event.type)
}

function systemEvents(result: StepResult): SurfaceEvent[] {
  return result.events.filter((event) => event.type === 'system/message')
}

function run(steps: readonly StepInput[], options?: Parameters<typeof createStepSurface>[0]): StepResult[] {
  const surface = createStepSurface(options)
  return steps.map((input) => surface.step(input))
}

describe('system/message', () => {
  test('the first render is appended at node 0', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha']]) }])
    expect(systemEvents(first!)).toEqual([{ type: 'system/message', op: 'append', node: 0, text: 'Alpha' }])
  })

  test('an unchanged render records no system message', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']]) }, { assembly: plain([['a', 'Alpha']]) }])
    expect(second!.events).toEqual([])
  })

  test('a changed render replaces node 0', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']]) }, { assembly: plain([['a', 'Beta']]) }])
    expect(systemEvents(second!)).toEqual([{ type: 'system/message', op: 'replace', node: 0, text: 'Beta' }])
  })

  test('an empty first render is still appended at node 0 (node 0 is the system message from then on)', () => {
    const [first, second] = run([{ assembly: plain([]) }, { assembly: plain([['a', 'Alpha']]) }])
    expect(systemEvents(first!)).toEqual([{ type: 'system/message', op: 'append', node: 0, text: '' }])
    expect(systemEvents(second!)).toEqual([{ type: 'system/message', op: 'replace', node: 0, text: 'Alpha' }])
  })

  test('a render that becomes empty replaces node 0 with empty text in replace mode', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']]) }, { assembly: plain([['a', '']]) }])
    expect(systemEvents(second!)).toEqual([{ type: 'system/message', op: 'replace', node: 0, text: '' }])
  })

  test('in-history mode appends a changed prompt at node historyLength', () => {
    const [first, second] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', 'Beta']]), historyLength: 7 },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(systemEvents(first!)).toEqual([{ type: 'system/message', op: 'append', node: 0, text: 'Alpha' }])
    expect(systemEvents(second!)).toEqual([{ type: 'system/message', op: 'append', node: 7, text: 'Beta' }])
  })

  test('in-history mode records nothing for an unchanged prompt', () => {
    const [, second] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', 'Alpha']]), historyLength: 3 },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(second!.events).toEqual([])
  })

  test('in-history mode records nothing for a prompt that became empty (an empty message tells the model nothing)', () => {
    const [, second] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', '']]), historyLength: 3 },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(second!.events).toEqual([])
  })

  test('in-history mode compares with the text the model last received (back from empty to the same text: no event)', () => {
    const [, , third] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', '']]), historyLength: 3 },
        { assembly: plain([['a', 'Alpha']]), historyLength: 5 },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(third!.events).toEqual([])
  })

  test('in-history mode without historyLength throws a TypeError naming the option', () => {
    const surface = createStepSurface({ systemPromptUpdate: 'in-history' })
    expect(() => surface.step({ assembly: plain([['a', 'Alpha']]) })).toThrow(TypeError)
    expect(() => surface.step({ assembly: plain([['a', 'Alpha']]) })).toThrow(/"historyLength"/)
  })

  test('historyLength 0 after the first step is rejected (an append at node 0 would overwrite the system message)', () => {
    const surface = createStepSurface({ systemPromptUpdate: 'in-history' })
    surface.step({ assembly: plain([['a', 'Alpha']]), historyLength: 0 })
    expect(() => surface.step({ assembly: plain([['a', 'Beta']]), historyLength: 0 })).toThrow(/at least 1/)
  })

  test('a negative or fractional historyLength is rejected', () => {
    const surface = createStepSurface({ systemPromptUpdate: 'in-history' })
    expect(() => surface.step({ assembly: plain([]), historyLength: -1 })).toThrow(/historyLength/)
    expect(() => surface.step({ assembly: plain([]), historyLength: 1.5 })).toThrow(/historyLength/)
  })

  test("a step's systemPromptUpdate overrides the surface option", () => {
    const surface = createStepSurface({ systemPromptUpdate: 'in-history' })
    surface.step({ assembly: plain([['a', 'Alpha']]), historyLength: 0 })
    const replaced = surface.step({ assembly: plain([['a', 'Beta']]), systemPromptUpdate: 'replace' })
    expect(systemEvents(replaced)).toEqual([{ type: 'system/message', op: 'replace', node: 0, text: 'Beta' }])
    const appended = surface.step({ assembly: plain([['a', 'Gamma']]), historyLength: 4 })
    expect(systemEvents(appended)).toEqual([{ type: 'system/message', op: 'append', node: 4, text: 'Gamma' }])
  })

  test('an unknown systemPromptUpdate is a TypeError, on the surface and on a step', () => {
    expect(() => createStepSurface({ systemPromptUpdate: 'prepend' as never })).toThrow(TypeError)
    const surface = createStepSurface()
    expect(() => surface.step({ assembly: plain([]), systemPromptUpdate: 'prepend' as never })).toThrow(
      /systemPromptUpdate/,
    )
  })

  test('after compaction in in-history mode the model holds node 0 again, so a prompt equal to node 0 records nothing', () => {
    const [, , third] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', 'Beta']]), historyLength: 4 },
        { assembly: plain([['a', 'Alpha']]), historyLength: 2, compacted: true },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(systemEvents(third!)).toEqual([])
  })

  test('after compaction in in-history mode a prompt that differs from node 0 is appended again (the appended one was compacted away)', () => {
    const [, , third] = run(
      [
        { assembly: plain([['a', 'Alpha']]), historyLength: 0 },
        { assembly: plain([['a', 'Beta']]), historyLength: 4 },
        { assembly: plain([['a', 'Beta']]), historyLength: 2, compacted: true },
      ],
      { systemPromptUpdate: 'in-history' },
    )
    expect(systemEvents(third!)).toEqual([{ type: 'system/message', op: 'append', node: 2, text: 'Beta' }])
  })
})

describe('request/header', () => {
  test('the first step records config and tools with reason "initial"', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }), config: { model: 'm1' } }])
    expect(first!.events.filter((event) => event.type === 'request/header')).toEqual([
      { type: 'request/header', config: { model: 'm1' }, tools: [tool('bash')], reason: 'initial' },
    ])
  })

  test('the header never carries the system prompt', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }) }])
    const header = first!.events.find((event) => event.type === 'request/header')!
    expect(Object.keys(header).sort()).toEqual(['config', 'reason', 'tools', 'type'])
    expect(JSON.stringify(header)).not.toContain('Alpha')
  })

  test('a prompt-only change records a system/message replace and no header', () => {
    const tools = [tool('bash')]
    const [, second] = run([
      { assembly: plain([['a', 'Alpha']], { tools }), config: { model: 'm1' } },
      { assembly: plain([['a', 'Beta']], { tools }), config: { model: 'm1' } },
    ])
    expect(typesOf(second!)).toEqual(['system/message'])
  })

  test('a tool-only change records a header whose reason names the added tool, and no system message', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }) },
      { assembly: plain([['a', 'Alpha']], { tools: [tool('bash'), tool('grep')] }) },
    ])
    expect(second!.events).toEqual([
      { type: 'request/header', config: {}, tools: [tool('bash'), tool('grep')], reason: 'tools changed (added grep)' },
    ])
  })

  test('the reason names removed, changed and reordered tools', () => {
    const changedRead = { ...tool('read'), description: 'read a file, now with line numbers' }
    const [, second] = run([
      { assembly: plain([], { tools: [tool('bash'), tool('edit'), tool('read'), tool('ls')] }) },
      { assembly: plain([], { tools: [tool('edit'), tool('bash'), changedRead] }) },
    ])
    const header = second!.events.find((event) => event.type === 'request/header')
    expect(header).toMatchObject({ reason: 'tools changed (removed ls; changed read; reordered)' })
  })

  test('a config-only change records a header with reason "config changed"', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha']]), config: { model: 'm1' } },
      { assembly: plain([['a', 'Alpha']]), config: { model: 'm2' } },
    ])
    expect(second!.events).toEqual([{ type: 'request/header', config: { model: 'm2' }, tools: [], reason: 'config changed' }])
  })

  test('a tools and config change is one header naming both', () => {
    const [, second] = run([
      { assembly: plain([], { tools: [tool('bash')] }), config: { model: 'm1' } },
      { assembly: plain([], { tools: [] }), config: { model: 'm2' } },
    ])
    expect(second!.events).toEqual([
      { type: 'request/header', config: { model: 'm2' }, tools: [], reason: 'tools changed (removed bash); config changed' },
    ])
  })

  test('header config and tools are deep-frozen copies (a later mutation by the caller does not reach the log)', () => {
    const config = { model: 'm1', sampling: { temperature: 0 } }
    const schema = { name: 'bash', description: 'run', parameters: { type: 'object' } }
    const [first] = run([{ assembly: plain([], { tools: [schema] }), config }])
    config.sampling.temperature = 1
    schema.description = 'mutated'
    const header = first!.events[1] as Extract<SurfaceEvent, { type: 'request/header' }>
    expect(header.config).toEqual({ model: 'm1', sampling: { temperature: 0 } })
    expect(header.tools[0]!.description).toBe('run')
    expect(Object.isFrozen(header.config.sampling)).toBe(true)
    expect(Object.isFrozen(header.tools[0]!.parameters)).toBe(true)
  })

  test('a config that cannot be serialized is a TypeError naming the option', () => {
    const surface = createStepSurface()
    expect(() => surface.step({ assembly: plain([]), config: { n: 1n } })).toThrow(/"config" must be JSON-serializable/)
    expect(() => surface.step({ assembly: plain([]), config: [] as never })).toThrow(TypeError)
  })

  test('a config that is not a plain object, or whose JSON is not an object, is a TypeError naming the option', () => {
    const surface = createStepSurface()
    const rule = 'step option "config" must be a plain object whose JSON is an object'
    const fails = (config: unknown) => {
      expect(() => surface.step({ assembly: plain([]), config: config as never })).toThrowError(rule)
      expect(() => surface.step({ assembly: plain([]), config: config as never })).toThrow(TypeError)
    }
    fails(new Map([['model', 'm1']]))
    fails(new (class Config { model = 'm1' })())
    fails({ toJSON: () => undefined })
    fails({ toJSON: () => 'm1' })
    fails(null)
    // A null-prototype object is plain; the failures above changed nothing, so this is the first step.
    const config = Object.assign(Object.create(null) as object, { model: 'm1' })
    expect(surface.step({ assembly: plain([]), config }).events[1]).toMatchObject({ type: 'request/header', config: { model: 'm1' }, reason: 'initial' })
  })
})

describe('context/snapshot', () => {
  const header = 'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

  test('a non-empty snapshot is recorded on the first step, with its text and sections', () => {
    const [first] = run([{ assembly: plain([], { contexts: [['cwd', 'cwd: /repo']] }) }])
    expect(first!.events.find((event) => event.type === 'context/snapshot')).toEqual({
      type: 'context/snapshot',
      text: `${header}\n\ncwd: /repo`,
      sections: [{ name: 'cwd', text: 'cwd: /repo' }],
    })
  })

  test('an empty snapshot is never recorded', () => {
    const [first] = run([{ assembly: plain([], { contexts: [['cwd', '']] }) }])
    expect(typesOf(first!)).not.toContain('context/snapshot')
  })

  test('an unchanged snapshot is not recorded again', () => {
    const ctx = { contexts: [['cwd', 'cwd: /repo']] as const }
    const [, second] = run([{ assembly: plain([], ctx) }, { assembly: plain([], ctx) }])
    expect(second!.events).toEqual([])
  })

  test('a changed snapshot is recorded in full', () => {
    const [, second] = run([
      { assembly: plain([], { contexts: [['cwd', 'cwd: /repo'], ['git', 'branch: main']] }) },
      { assembly: plain([], { contexts: [['cwd', 'cwd: /repo'], ['git', 'branch: dev']] }) },
    ])
    expect(second!.events).toEqual([
      {
        type: 'context/snapshot',
        text: `${header}\n\ncwd: /repo\n\nbranch: dev`,
        sections: [
          { name: 'cwd', text: 'cwd: /repo' },
          { name: 'git', text: 'branch: dev' },
        ],
      },
    ])
  })

  test('after compaction an unchanged snapshot is recorded again (compaction removed the previous one)', () => {
    const ctx = { contexts: [['cwd', 'cwd: /repo']] as const }
    const [, second, third] = run([
      { assembly: plain([], ctx) },
      { assembly: plain([], ctx), compacted: true },
      { assembly: plain([], ctx) },
    ])
    expect(typesOf(second!)).toEqual(['context/snapshot'])
    expect(third!.events).toEqual([])
  })

  test('a snapshot that became empty records nothing, and the model keeps the last one it received', () => {
    const [, second, third] = run([
      { assembly: plain([], { contexts: [['cwd', 'cwd: /repo']] }) },
      { assembly: plain([], { contexts: [] }) },
      { assembly: plain([], { contexts: [['cwd', 'cwd: /repo']] }) },
    ])
    expect(second!.events).toEqual([])
    expect(third!.events).toEqual([])
  })

  test('a context change alone records neither a system message nor a header', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha']], { contexts: [['cwd', 'cwd: /a']] }) },
      { assembly: plain([['a', 'Alpha']], { contexts: [['cwd', 'cwd: /b']] }) },
    ])
    expect(typesOf(second!)).toEqual(['context/snapshot'])
  })
})

describe('prefix report', () => {
  test('the first step has no reusable prefix and reports every non-empty section as changed', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha'], ['empty', ''], ['b', 'Beta']]) }])
    expect(first).toMatchObject({
      stablePrefixLength: 0,
      stablePrefixBytes: 0,
      changedSections: ['a', 'b'],
      firstChangedSection: 'a',
    })
  })

  test('an unchanged prompt is reusable in full and reports no changed section', () => {
    const sections = [['a', 'Alpha'], ['b', 'Beta']] as const
    const [, second] = run([{ assembly: plain(sections) }, { assembly: plain(sections) }])
    expect(second).toMatchObject({ stablePrefixLength: 'Alpha\n\nBeta'.length, stablePrefixBytes: 11, changedSections: [] })
    expect(second).not.toHaveProperty('firstChangedSection')
  })

  test('a section name a listener repeated is reported when any of its copies changes', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['note', 'first note'], ['note', 'one']]) },
      { assembly: plain([['a', 'Alpha'], ['note', 'first note'], ['note', 'two']]) },
    ])
    expect(second).toMatchObject({ changedSections: ['note'], firstChangedSection: 'note', cacheBreak: { cause: 'section', section: 'note' } })
  })

  test('the prefix runs through the unchanged sections and into the common start of the first changed one', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['b', 'cwd: /one'], ['c', 'Gamma']]) },
      { assembly: plain([['a', 'Alpha'], ['b', 'cwd: /two'], ['c', 'Gamma']]) },
    ])
    expect(second).toMatchObject({
      stablePrefixLength: 'Alpha\n\ncwd: /'.length,
      changedSections: ['b'],
      firstChangedSection: 'b',
    })
  })

  test('bytes count UTF-8 while the length counts UTF-16 code units', () => {
    const [, second] = run([
      { assembly: plain([['a', 'héllo wörld'], ['b', 'x1']]) },
      { assembly: plain([['a', 'héllo wörld'], ['b', 'x2']]) },
    ])
    const prefix = 'héllo wörld\n\nx'
    expect(second).toMatchObject({ stablePrefixLength: prefix.length, stablePrefixBytes: Buffer.byteLength(prefix) })
    expect(second!.stablePrefixBytes).toBe(prefix.length + 2)
  })

  test('a prefix ending between the halves of a surrogate pair counts the high half as a code unit but not as bytes', () => {
    const [, second] = run([{ assembly: plain([['a', 'ok 😀']]) }, { assembly: plain([['a', 'ok 😁']]) }])
    // 😀 is \uD83D\uDE00 and 😁 is \uD83D\uDE01: they share the high surrogate.
    expect(second!.stablePrefixLength).toBe('ok '.length + 1)
    expect(second!.stablePrefixBytes).toBe(Buffer.byteLength('ok '))
  })

  test('countTokens never sees half a surrogate pair: the counted stable prefix ends on a whole code point', () => {
    const seen: string[] = []
    const countTokens = (text: string): number => (seen.push(text), text.length)
    for (const options of [{ countTokens }, { budget: { maxTokens: 1000, countTokens } }]) {
      seen.length = 0
      const [, second] = run([{ assembly: plain([['a', 'ok 😀']]) }, { assembly: plain([['a', 'ok 😁']]) }], options)
      expect(seen.filter((text) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(text))).toEqual([])
      expect(second).toMatchObject({ stablePrefixLength: 'ok '.length + 1, stablePrefixTokens: 'ok '.length })
    }
  })

  test('an appended section extends the prompt: the whole previous prompt is reusable', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']]) }, { assembly: plain([['a', 'Alpha'], ['b', 'Beta']]) }])
    expect(second).toMatchObject({ stablePrefixLength: 'Alpha'.length, changedSections: ['b'], firstChangedSection: 'b' })
  })

  test('an empty section adds no separator, so becoming empty shortens the prefix to where it was', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['b', 'Beta'], ['c', 'Gamma']]) },
      { assembly: plain([['a', 'Alpha'], ['b', ''], ['c', 'Gamma']]) },
    ])
    // "Alpha\n\nBeta…" vs "Alpha\n\nGamma": the common part is "Alpha\n\n".
    expect(second).toMatchObject({ stablePrefixLength: 'Alpha\n\n'.length, changedSections: ['b'], firstChangedSection: 'b' })
  })

  test('an empty section that stays empty is not a change', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['e', ''], ['c', 'Gamma']]) },
      { assembly: plain([['a', 'Alpha'], ['e', ''], ['c', 'Delta']]) },
    ])
    expect(second).toMatchObject({ stablePrefixLength: 'Alpha\n\n'.length, changedSections: ['c'] })
  })

  test('a removed section is reported where it was in the prompt', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['b', 'Beta'], ['c', 'Gamma']]) },
      { assembly: plain([['a', 'Alpha'], ['c', 'Gamma!']]) },
    ])
    expect(second).toMatchObject({ changedSections: ['b', 'c'], firstChangedSection: 'b' })
  })

  test('a section that only moved is reported where the prompt diverges', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha'], ['b', 'Beta'], ['c', 'Gamma']]) },
      { assembly: plain([['a', 'Alpha'], ['c', 'Gamma'], ['b', 'Beta']]) },
    ])
    expect(second).toMatchObject({ stablePrefixLength: 'Alpha\n\n'.length, changedSections: ['c'], firstChangedSection: 'c' })
  })

  test('a tool-only change leaves the whole prompt reusable', () => {
    const [, second] = run([
      { assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }) },
      { assembly: plain([['a', 'Alpha']], { tools: [tool('grep')] }) },
    ])
    expect(second).toMatchObject({ stablePrefixLength: 5, changedSections: [] })
  })

  test('an unchanged memoized assembly is rendered from the memo once per step (no section re-rendered)', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'a', order: 1, text: 'Alpha {{who}}' })
    app.systemPrompt.section({ name: 'b', order: 2, text: 'Beta' })
    app.systemPrompt.variable('who', 'me')
    const surface = createStepSurface()
    surface.step({ assembly: await app.systemPrompt.assemble() })
    const assembly = await app.systemPrompt.assemble()
    const before = app.systemPrompt.stats()
    const result = surface.step({ assembly })
    const after = app.systemPrompt.stats()
    expect(after.sectionRenders - before.sectionRenders).toBe(0)
    // One memo lookup per section (4, two empty persona sections included): render() serves the text, the
    // parts the prefix report compares and result.rendered from one pass.
    expect(after.renderCacheHits - before.renderCacheHits).toBe(4)
    expect(result).toMatchObject({ stablePrefixLength: 'Alpha me\n\nBeta'.length, changedSections: [] })
  })

  test('a memoized assembly whose variable changed reports only the section that references it', async () => {
    const app = await mount(BARE)
    const who = signal('me')
    app.systemPrompt.section({ name: 'a', order: 1, text: 'Alpha' })
    app.systemPrompt.section({ name: 'b', order: 2, text: 'Hello {{who}}' })
    app.systemPrompt.section({ name: 'c', order: 3, text: 'Gamma' })
    app.systemPrompt.variable('who', who)
    const surface = createStepSurface()
    surface.step({ assembly: await app.systemPrompt.assemble() })
    who.value = 'you'
    const result = surface.step({ assembly: await app.systemPrompt.assemble() })
    expect(result).toMatchObject({
      stablePrefixLength: 'Alpha\n\nHello '.length,
      changedSections: ['b'],
      firstChangedSection: 'b',
    })
  })

  test('persona suffix values that differ per agent leave the reusable prefix identical up to the suffix section', async () => {
    const app = await mount({
      identity: 'You are Loom.',
      personaPrefix: 'Model: {{model}}.',
      personaSuffix: 'Workspace: {{workspace}}',
    })
    app.systemPrompt.variable('model', 'loom-1')
    app.systemPrompt.section({ name: 'guidance', order: SECTION_ORDERS.TOOL_GUIDANCE, text: 'Use tools carefully.' })
    const key1 = { name: 'agent-1' }
    const key2 = { name: 'agent-2' }
    const agent1 = await mintScope(app, key1)
    const agent2 = await mintScope(app, key2)
    agent1.ctx.systemPrompt.variable('workspace', '/home/a/project')
    agent2.ctx.systemPrompt.variable('workspace', '/srv/b/checkout')
    const a1 = await app.systemPrompt.assemble({ scope: key1 })
    const a2 = await app.systemPrompt.assemble({ scope: key2 })
    const surface = createStepSurface()
    surface.step({ assembly: a1 })
    const result = surface.step({ assembly: a2 })
    const prompt1 = renderPrompt(a1)
    const suffixStart = prompt1.indexOf('Workspace: ')
    expect(prompt1.slice(0, suffixStart)).toBe('You are Loom.\n\nModel: loom-1.\n\nUse tools carefully.\n\n')
    expect(result).toMatchObject({
      stablePrefixLength: suffixStart + 'Workspace: /'.length,
      stablePrefixBytes: suffixStart + 'Workspace: /'.length,
      changedSections: [PERSONA_SUFFIX_SECTION],
      firstChangedSection: PERSONA_SUFFIX_SECTION,
    })
  })
})

describe('cache-stability lint', () => {
  test('a volatile variable referenced from a section is reported with the section, its layer and the variable', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1' }
    const agent = await mintScope(app, key)
    agent.ctx.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    const result = createStepSurface().step({ assembly: await app.systemPrompt.assemble({ scope: key }) })
    expect(result.warnings).toHaveLength(1)
    expect(result.warnings[0]).toMatchObject({ kind: 'volatile-variable', section: 'clock', variable: 'now' })
    expect((result.warnings[0] as StabilityWarning).layer).toBe(key)
    expect(result.warnings[0]!.message).toContain('prompt section "clock" in scope "agent-1"')
    expect(result.warnings[0]!.message).toContain('runtime context')
  })

  test('a global section referencing a volatile variable names the global layer', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    const result = createStepSurface().step({ assembly: await app.systemPrompt.assemble() })
    expect((result.warnings as StabilityWarning[]).map(({ kind, section, layer, variable }) => ({ kind, section, layer, variable }))).toEqual([
      { kind: 'volatile-variable', section: 'clock', layer: 'global', variable: 'now' },
    ])
  })

  test('static and session variables, and volatile ones used only by contexts or literal sections, are not reported', async () => {
    const app = await mount(BARE)
    app.systemPrompt.variable('user', 'ada', { stability: 'session' })
    app.systemPrompt.variable('model', 'm1', { stability: 'static' })
    app.systemPrompt.variable('now', '12:00', { stability: 'volatile' })
    app.systemPrompt.section({ name: 'intro', order: 1, text: 'Hi {{user}} on {{model}}' })
    app.systemPrompt.section({ name: 'literal', order: 2, text: 'Write {{now}} literally', interpolate: false })
    app.systemPrompt.context({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    const result = createStepSurface().step({ assembly: await app.systemPrompt.assemble() })
    expect(result.warnings).toEqual([])
  })

  test('each finding is reported once per surface', async () => {
    const app = await mount(BARE)
    app.systemPrompt.section({ name: 'clock', order: 1, text: 'Now: {{now}}' })
    const now = signal('12:00')
    app.systemPrompt.variable('now', now, { stability: 'volatile' })
    const surface = createStepSurface()
    expect(surface.step({ assembly: await app.systemPrompt.assemble() }).warnings).toHaveLength(1)
    now.value = '12:01'
    expect(surface.step({ assembly: await app.systemPrompt.assemble() }).warnings).toEqual([])
  })

  test('a section that changed in two consecutive steps while a later section stayed the same is reported with its layer', async () => {
    const app = await mount(BARE)
    const key = { name: 'agent-1' }
    const agent = await mintScope(app, key)
    const tick = signal('1')
    agent.ctx.systemPrompt.section({ name: 'status', order: 1, text: tick })
    app.systemPrompt.section({ name: 'guidance', order: 2, text: 'Long stable guidance.' })
    const surface = createStepSurface()
    const assemble = () => app.systemPrompt.assemble({ scope: key })
    expect(surface.step({ assembly: await assemble() }).warnings).toEqual([])
    tick.value = '2'
    expect(surface.step({ assembly: await assemble() }).warnings).toEqual([])
    tick.value = '3'
    const third = surface.step({ assembly: await assemble() })
    expect(third.warnings).toHaveLength(1)
    expect(third.warnings[0]).toMatchObject({ kind: 'unstable-section', section: 'status' })
    expect((third.warnings[0] as StabilityWarning).layer).toBe(key)
    expect(third.warnings[0]!.message).toContain('prompt section "status" in scope "agent-1" changed in two consecutive steps')
  })

  test('a section that changes every step at the end of the prompt is not reported (nothing cacheable after it)', () => {
    const steps = ['1', '2', '3'].map((n) => ({ assembly: plain([['guidance', 'Stable.'], ['status', `tick ${n}`]]) }))
    expect(run(steps).flatMap((result) => result.warnings)).toEqual([])
  })

  test('a section that changed once, then again after a quiet step, is not reported (the changes were not consecutive)', () => {
    const texts = ['1', '2', '2', '3']
    const steps = texts.map((n) => ({ assembly: plain([['status', `tick ${n}`], ['guidance', 'Stable.']]) }))
    expect(run(steps).flatMap((result) => result.warnings)).toEqual([])
  })

  test('a section is not reported while every later section changes too', () => {
    const steps = ['1', '2', '3'].map((n) => ({ assembly: plain([['status', `tick ${n}`], ['other', `other ${n}`]]) }))
    expect(run(steps).flatMap((result) => result.warnings)).toEqual([])
  })

  test('a plain assembly (no assemble() meta) gets the unstable-section warning without a layer', () => {
    const steps = ['1', '2', '3'].map((n) => ({ assembly: plain([['status', `tick ${n}`], ['guidance', 'Stable.']]) }))
    const warnings = run(steps).flatMap((result) => result.warnings)
    expect(warnings).toEqual([
      {
        kind: 'unstable-section',
        section: 'status',
        message: expect.stringContaining('prompt section "status" changed in two consecutive steps'),
      },
    ])
  })
})

describe('failures', () => {
  test('a step whose render throws changes nothing (the next step compares with the last good one)', () => {
    const surface = createStepSurface()
    surface.step({ assembly: plain([['a', 'Alpha']]) })
    expect(() => surface.step({ assembly: plain([['a', 'Hi {{missing}}']]) })).toThrow(/unknown prompt variable/)
    const result = surface.step({ assembly: plain([['a', 'Alpha']]) })
    expect(result).toMatchObject({ step: 2, events: [], stablePrefixLength: 5 })
  })

  test('a step without an assembly is a TypeError', () => {
    expect(() => createStepSurface().step({} as StepInput)).toThrow(TypeError)
  })

  test('a wrong-shaped assembly is a TypeError naming the option and the item, and changes nothing', () => {
    const surface = createStepSurface()
    surface.step({ assembly: plain([['a', 'Alpha']]) })
    const { sections, variables, tools } = plain([['a', 'Beta']])
    const fails = (assembly: unknown, message: string) => {
      expect(() => surface.step({ assembly: assembly as Plain })).toThrowError(message)
      expect(() => surface.step({ assembly: assembly as Plain })).toThrow(TypeError)
    }
    const fix = '; pass the result of systemPrompt.assemble()'
    fails({ sections, variables, tools }, `step option "assembly" is an object without a contexts array${fix}`)
    fails({ contexts: [], variables, tools }, `step option "assembly" is an object without a sections array${fix}`)
    fails({ sections, contexts: [], tools }, `step option "assembly" is an object without a variables record${fix}`)
    fails({ sections, contexts: [null], variables, tools }, 'step option "assembly" has contexts[0] = null; every context needs a string name and text')
    fails({ sections: [{ text: 'Beta' }], contexts: [], variables, tools }, 'step option "assembly" has sections[0] = { name: undefined, text: string "Beta" }')
    expect(surface.step({ assembly: plain([['a', 'Alpha']]) })).toMatchObject({ step: 2, events: [] })
  })

  test('steps are numbered from 1 and echo the compacted flag', () => {
    const [first, second] = run([{ assembly: plain([]) }, { assembly: plain([]), compacted: true }])
    expect([first!.step, first!.compacted, second!.step, second!.compacted]).toEqual([1, false, 2, true])
  })
})

describe('rendered, tools/config changes and the reusable prefix', () => {
  test('the result carries the RenderedPrompt that was compared', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha'], ['empty', ''], ['b', 'Beta']]) }])
    expect(first!.rendered.text).toBe('Alpha\n\nBeta')
    expect(first!.rendered.parts.map((part) => part.name)).toEqual(['a', 'b'])
  })

  test('a prompt-only change keeps tools and config unchanged and the reusable prefix equal to the stable one', () => {
    const tools = [tool('bash')]
    const [, second] = run([{ assembly: plain([['a', 'Alpha'], ['b', 'one']], { tools }) }, { assembly: plain([['a', 'Alpha'], ['b', 'two']], { tools }) }])
    expect(second).toMatchObject({ toolsChanged: false, configChanged: false, stablePrefixLength: 7, reusablePrefixLength: 7, reusablePrefixBytes: 7 })
  })

  test('a tool change makes the reusable prefix 0 although the system prompt is stable (tools are cached before system)', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }) }, { assembly: plain([['a', 'Alpha']], { tools: [tool('grep')] }) }])
    expect(second).toMatchObject({ toolsChanged: true, configChanged: false, stablePrefixLength: 5, reusablePrefixLength: 0, reusablePrefixBytes: 0 })
  })

  test('a config change makes the reusable prefix 0', () => {
    const [, second] = run([{ assembly: plain([['a', 'Alpha']]), config: { model: 'a' } }, { assembly: plain([['a', 'Alpha']]), config: { model: 'b' } }])
    expect(second).toMatchObject({ toolsChanged: false, configChanged: true, stablePrefixLength: 5, reusablePrefixLength: 0 })
  })

  test('the first step reports no tool or config change (nothing to compare) and no reusable prefix', () => {
    const [first] = run([{ assembly: plain([['a', 'Alpha']], { tools: [tool('bash')] }) }])
    expect(first).toMatchObject({ toolsChanged: false, configChanged: false, reusablePrefixLength: 0, reusablePrefixBytes: 0 })
  })
})

describe('token counts', () => {
  const words = (text: string): number => text.split(/\s+/).filter(Boolean).length

  test('with countTokens the result reports stable-prefix, reusable-prefix and prompt tokens', () => {
    const [, second] = run([{ assembly: plain([['a', 'one two three'], ['b', 'x']]) }, { assembly: plain([['a', 'one two three'], ['b', 'y z']]) }], {
      countTokens: words,
    })
    expect(second).toMatchObject({ stablePrefixTokens: 3, reusablePrefixTokens: 3, promptTokens: 5 })
  })

  test('reusable-prefix tokens are 0 when the tools changed', () => {
    const [, second] = run([{ assembly: plain([['a', 'one two']]) }, { assembly: plain([['a', 'one two']], { tools: [tool('bash')] }) }], { countTokens: words })
    expect(second).toMatchObject({ stablePrefixTokens: 2, reusablePrefixTokens: 0, promptTokens: 2 })
  })

  test('without countTokens there are no token figures', () => {
    const [first] = run([{ assembly: plain([['a', 'one']]) }])
    expect(first).not.toHaveProperty('promptTokens')
    expect(first).not.toHaveProperty('stablePrefixTokens')
  })

  test('a countTokens that is not a function is a TypeError from createStepSurface', () => {
    expect(() => createStepSurface({ countTokens: 4 as never })).toThrow(/option "countTokens" must be a function/)
  })

  test('a countTokens returning a negative number fails the step, naming countTokens, and changes nothing', () => {
    let bad = false
    const surface = createStepSurface({ countTokens: (text) => (bad ? -1 : words(text)) })
    surface.step({ assembly: plain([['a', 'one']]) })
    bad = true
    expect(() => surface.step({ assembly: plain([['a', 'two']]) })).toThrow(/"countTokens" must return a non-negative finite number \(got number -1\)/)
    bad = false
    const next = surface.step({ assembly: plain([['a', 'two']]) })
    expect(next).toMatchObject({ step: 2, events: [{ type: 'system/message', op: 'replace', node: 0, text: 'two' }] })
  })
})

describe('observeUsage', () => {
  test('returns a usage record for the latest step with the predicted reusable-prefix tokens', () => {
    const surface = createStepSurface({ countTokens: (text) => text.length })
    surface.step({ assembly: plain([['a', 'Alpha'], ['b', 'one']]) })
    surface.step({ assembly: plain([['a', 'Alpha'], ['b', 'two']]) })
    expect(surface.observeUsage({ inputTokens: 100, cachedInputTokens: 60, cacheWriteTokens: 5 })).toEqual({
      type: 'usage',
      step: 2,
      inputTokens: 100,
      cachedInputTokens: 60,
      cacheWriteTokens: 5,
      predictedTokens: 'Alpha\n\n'.length,
    })
  })

  test('without countTokens the record has no predictedTokens', () => {
    const surface = createStepSurface()
    surface.step({ assembly: plain([['a', 'Alpha']]) })
    expect(surface.observeUsage({ inputTokens: 3, cachedInputTokens: 0 })).toEqual({ type: 'usage', step: 1, inputTokens: 3, cachedInputTokens: 0 })
  })

  test('observeUsage before the first step throws', () => {
    expect(() => createStepSurface().observeUsage({ inputTokens: 1, cachedInputTokens: 0 })).toThrow(/before the first step/)
  })

  test.each([
    ['inputTokens', { inputTokens: -1, cachedInputTokens: 0 }],
    ['cachedInputTokens', { inputTokens: 1, cachedInputTokens: Number.NaN }],
    ['cacheWriteTokens', { inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: '3' }],
  ])('a bad %s is a TypeError naming the field', (field, usage) => {
    const surface = createStepSurface()
    surface.step({ assembly: plain([['a', 'Alpha']]) })
    expect(() => surface.observeUsage(usage as never)).toThrow(new RegExp(`field "${field}" must be a non-negative finite number`))
  })
})
