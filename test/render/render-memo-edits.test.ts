import { describe, expect, test } from 'vitest'
import { createStats, type PromptStats } from '../../src/assembly/stats.js'
import { RenderMemo } from '../../src/render/render-memo.js'
import { renderItem } from '../../src/render/shared-templates.js'

// The memo's edit path (entry-edits.ts): a plan array that differs from the
// last commit by a few removed and inserted entries. Entries are immutable
// objects, texts come in a parallel `given` array, `dynamic` lists the
// positions whose text can change for the same entry.

interface Entry {
  readonly name: string
  readonly interpolate?: boolean
}

const entry = (name: string, interpolate?: boolean): Entry => (interpolate === undefined ? { name } : { name, interpolate })

/** The memo's state as plain data, and what a from-scratch render of the same items gives. */
function state(memo: RenderMemo): unknown {
  return { names: [...memo.names], texts: [...memo.texts], outputs: [...memo.outputs], templates: memo.templates.map((t) => t && { parts: [...t.parts], refs: [...t.refs] }) }
}

function fromScratch(items: readonly Entry[], texts: readonly string[], variables: Readonly<Record<string, string>>): unknown {
  const rendered = items.map((item, i) => renderItem({ ...item, text: texts[i]! }, variables, 'prompt section'))
  return { names: items.map((item) => item.name), texts: [...texts], outputs: rendered.map((r) => r.output), templates: rendered.map((r) => r.template && { parts: [...r.template.parts], refs: [...r.template.refs] }) }
}

function render(memo: RenderMemo, items: readonly Entry[], texts: readonly string[], variables: Readonly<Record<string, string>>, stats: PromptStats, dynamic?: readonly number[]): void {
  memo.render(items, texts, variables, 'prompt section', stats, dynamic)
}

/** Ten entries `e0`..`e9` with texts `t0`..`t9`; `e3` references `x`, `e6` references `y`. */
function world(): { entries: Entry[]; texts: string[] } {
  const entries = Array.from({ length: 10 }, (_, i) => entry(`e${i}`))
  const texts = entries.map((_, i) => (i === 3 ? 't3 {{x}}' : i === 6 ? 't6 {{y}}' : `t${i}`))
  return { entries, texts }
}

/** The world rendered once into a fresh memo, with x = X and y = Y, nothing listed as dynamic. */
function renderedOnce(): { entries: Entry[]; texts: string[]; memo: RenderMemo; stats: PromptStats; variables: Record<string, string> } {
  const { entries, texts } = world()
  const memo = new RenderMemo()
  const stats = createStats()
  const variables = { x: 'X', y: 'Y' }
  render(memo, entries, texts, variables, stats, [])
  return { entries, texts, memo, stats, variables }
}

const sorted = (names: readonly string[]) => [...names].sort()

describe('RenderMemo edits', () => {
  test('one removal and one insertion in a render renders only the inserted entry and moves every kept output without reading it', () => {
    const { texts } = world()
    // Entries that count the reads of their name: the kept ones are found by identity alone.
    let reads = 0
    const spied = (name: string): Entry => ({
      get name() {
        reads++
        return name
      },
    })
    const entries = texts.map((_, i) => spied(`e${i}`))
    const memo = new RenderMemo()
    const stats = createStats()
    const variables = { x: 'X', y: 'Y', z: 'Z' }
    render(memo, entries, texts, variables, stats, [])
    const version = memo.version
    // e1 goes, n (referencing z) comes in after e7.
    const items = [entries[0]!, ...entries.slice(2, 8), entry('n'), ...entries.slice(8)]
    const given = [texts[0]!, ...texts.slice(2, 8), 'n {{z}}', ...texts.slice(8)]
    const before = { ...stats }
    reads = 0
    render(memo, items, given, variables, stats, [])
    // At most the removed entry's name (is it the inserted one's, a move?): no kept entry is read.
    expect(reads).toBeLessThanOrEqual(1)
    expect(stats.sectionRenders - before.sectionRenders).toBe(1)
    expect(stats.renderCacheHits - before.renderCacheHits).toBe(9)
    expect(state(memo)).toEqual(fromScratch(items, given, variables))
    expect(memo.firstChange).toBe(1)
    expect(memo.version).toBe(version + 1)
    expect(memo.joined).toBeUndefined()
  })

  test('a variable change between a removal and an insertion re-fills the kept entry that references it, at its new position', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    render(memo, entries, texts, { x: 'X', y: 'Y' }, stats, [])
    // e0 goes, n comes in at the end, and y changes: e6 (now at 5) is re-filled, e3 (referencing x) is not.
    const items = [...entries.slice(1), entry('n')]
    const given = [...texts.slice(1), 'n']
    const variables = { x: 'X', y: 'Y2' }
    const before = { ...stats }
    render(memo, items, given, variables, stats, [])
    expect(stats.sectionRenders - before.sectionRenders).toBe(2)
    expect(state(memo)).toEqual(fromScratch(items, given, variables))
    expect(memo.outputs[5]).toBe('t6 Y2')
    expect(memo.changed).toEqual(new Set(['y']))
    expect(memo.firstChange).toBe(0)
  })

  test('a changed text inside a shifted run is rendered again, and only a position listed as dynamic is compared', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    const variables = { x: 'X', y: 'Y' }
    render(memo, entries, texts, variables, stats, [3, 5])
    // e2 goes; e5 (dynamic, now at 4) has a new text; e3 (dynamic, now at 2) keeps its own.
    const items = [...entries.slice(0, 2), ...entries.slice(3)]
    const given = [...texts.slice(0, 2), ...texts.slice(3)]
    given[3] = 'edited {{x}}'
    const before = { ...stats }
    render(memo, items, given, variables, stats, [2, 3])
    expect(stats.sectionRenders - before.sectionRenders).toBe(1)
    expect(state(memo)).toEqual(fromScratch(items, given, variables))
    expect(memo.outputs[3]).toBe('edited X')
    expect(sorted(memo.referenced)).toEqual(['x', 'y'])
  })

  test('the referenced names follow the removed and inserted templates', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    const variables = { x: 'X', y: 'Y', z: 'Z' }
    render(memo, entries, texts, variables, stats, [])
    expect(sorted(memo.referenced)).toEqual(['x', 'y'])
    // e6 (the only {{y}}) goes, n ({{z}}) comes in.
    const items = [...entries.slice(0, 6), ...entries.slice(7), entry('n')]
    const given = [...texts.slice(0, 6), ...texts.slice(7), 'n {{z}}']
    render(memo, items, given, variables, stats, [])
    expect(sorted(memo.referenced)).toEqual(['x', 'z'])
    // n goes again, and e3 (the only {{x}}) with it.
    render(memo, [...items.slice(0, 3), ...items.slice(4, -1)], [...given.slice(0, 3), ...given.slice(4, -1)], variables, stats, [])
    expect(memo.referenced).toEqual([])
  })

  test('an insertion that throws leaves the memo as it was, and the next render edits from the last commit', () => {
    const { entries, texts, memo, stats, variables } = renderedOnce()
    void memo.referenced
    const kept = { state: state(memo), version: memo.version, commits: memo.commits, referenced: sorted(memo.referenced) }
    const items = [...entries.slice(1), entry('bad')]
    expect(() => render(memo, items, [...texts.slice(1), 'bad {{nope}}'], variables, stats, [])).toThrow(/unknown prompt variable "\{\{nope\}\}" in prompt section "bad"/)
    expect({ state: state(memo), version: memo.version, commits: memo.commits, referenced: sorted(memo.referenced) }).toEqual(kept)
    const fixed = [...entries.slice(1), entry('good')]
    const given = [...texts.slice(1), 'good {{x}}']
    render(memo, fixed, given, variables, stats, [])
    expect(state(memo)).toEqual(fromScratch(fixed, given, variables))
  })

  test('an entry replaced by a new one of the same name and text (a re-registration) reuses the output instead of rendering it', () => {
    const { entries, texts, memo, stats, variables } = renderedOnce()
    const items = [...entries.slice(0, 3), entry('e3'), ...entries.slice(4)]
    const before = { ...stats }
    render(memo, items, texts, variables, stats, [])
    expect(stats.sectionRenders - before.sectionRenders).toBe(0)
    expect(state(memo)).toEqual(fromScratch(items, texts, variables))
  })

  test('more edits than the path takes fall back to the per-item render with the same result', () => {
    const { entries, texts, memo, stats, variables } = renderedOnce()
    // Every other entry is replaced by a new one (five removals, five insertions).
    const items = entries.map((e, i) => (i % 2 === 0 ? entry(`${e.name}'`, false) : e))
    const given = texts.map((t, i) => (i % 2 === 0 ? `${t} {{x}}` : t))
    const before = { ...stats }
    render(memo, items, given, variables, stats, [])
    expect(stats.sectionRenders - before.sectionRenders).toBe(5)
    expect(state(memo)).toEqual(fromScratch(items, given, variables))
  })

  test('a names reader taken at an edits commit gives that commit\'s names after later commits', () => {
    const { entries, texts, memo, stats, variables } = renderedOnce()
    const first = [...entries.slice(1), entry('n')]
    const firstTexts = [...texts.slice(1), 'n']
    render(memo, first, firstTexts, variables, stats, [])
    const reader = memo.namesReader()
    const second = [entry('m'), ...first.slice(0, -1)]
    render(memo, second, ['m', ...firstTexts.slice(0, -1)], variables, stats, [])
    expect(reader()).toEqual(first.map((e) => e.name))
    expect(memo.names).toEqual(second.map((e) => e.name))
  })

  test('the same entries again with one changed variable re-fill only the slot that references it, and keep the other arrays', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    render(memo, entries, texts, { x: 'X', y: 'Y' }, stats, [])
    memo.joined = 'joined'
    const { names, templates } = memo
    const version = memo.version
    const before = { ...stats }
    render(memo, entries, texts, { x: 'X', y: 'Y2' }, stats, [])
    expect(stats.sectionRenders - before.sectionRenders).toBe(1)
    expect(memo.outputs[6]).toBe('t6 Y2')
    expect(memo.firstChange).toBe(6)
    expect(memo.version).toBe(version + 1)
    expect(memo.joined).toBeUndefined()
    expect(memo.names).toBe(names)
    expect(memo.templates).toBe(templates)
  })

  test('a re-fill that gives the same output moves the version but keeps the joined text', () => {
    const entries = [entry('a'), entry('b')]
    const texts = ['{{p}}{{q}}', 'b']
    const memo = new RenderMemo()
    const stats = createStats()
    render(memo, entries, texts, { p: 'v', q: '' }, stats, [])
    memo.joined = 'joined'
    const { outputs } = memo
    const version = memo.version
    render(memo, [...entries], texts, { p: '', q: 'v' }, stats, [])
    expect(memo.outputs).toBe(outputs)
    expect(memo.version).toBe(version + 1)
    expect(memo.joined).toBe('joined')
  })

  test('the same entries with nothing changed commit without moving the version, the outputs or the joined text', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    const variables = { x: 'X', y: 'Y' }
    render(memo, entries, texts, variables, stats, [3, 6])
    memo.joined = 'joined'
    const { outputs, templates } = memo
    const version = memo.version
    const commits = memo.commits
    render(memo, [...entries], [...texts], { ...variables }, stats, [3, 6])
    expect({ outputs: memo.outputs, templates: memo.templates, version: memo.version, joined: memo.joined, firstChange: memo.firstChange }).toEqual({ outputs, templates, version, joined: 'joined', firstChange: 10 })
    expect(memo.outputs).toBe(outputs)
    expect(memo.commits).toBe(commits + 1)
  })

  test('a changed dynamic text at its own position gets a new template and output, and the names stay', () => {
    const { entries, texts } = world()
    const memo = new RenderMemo()
    const stats = createStats()
    const variables = { x: 'X', y: 'Y' }
    render(memo, entries, texts, variables, stats, [2, 3])
    void memo.referenced
    const { names } = memo
    const given = [...texts]
    given[3] = 'no references now'
    given[2] = 't2 {{y}}'
    render(memo, entries, given, variables, stats, [2, 3])
    expect(state(memo)).toEqual(fromScratch(entries, given, variables))
    expect(memo.names).toBe(names)
    expect(memo.firstChange).toBe(2)
    expect(sorted(memo.referenced)).toEqual(['y'])
  })
})
