import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createStepSurface, type PromptSection, type StepResult, type StepSurface } from '../../src/index.js'
import { BARE, mount } from '../assembly/system-prompt.fixtures.js'

// The token budget sums counts exactly (SPEC §2, Turn 3): fractional counts
// (a characters-times-ratio estimate) never drift into withholding a prompt
// that fits, integer counts add as integers, and a total past
// Number.MAX_SAFE_INTEGER fails the step naming countTokens and changes nothing.

/** A tenth of a token per character, as a quick estimate might count. */
const tenths = (text: string): number => text.length * 0.1

function section(name: string, order: number, length: number, extra: Partial<PromptSection> = {}): PromptSection {
  return { name, order, text: name[0]!.repeat(length), ...extra }
}

async function app(...sections: PromptSection[]): Promise<Context> {
  const root = await mount(BARE)
  for (const entry of sections) root.systemPrompt.section(entry)
  return root
}

function surfaceWith(maxTokens: number, countTokens: (text: string) => number, headroom = 0): StepSurface {
  return createStepSurface({ budget: { maxTokens, countTokens, headroom } })
}

async function step(surface: StepSurface, root: Context): Promise<StepResult> {
  return surface.step({ assembly: await root.systemPrompt.assemble() })
}

const sent = (result: StepResult): string[] => result.rendered.parts.map((part) => part.name)

describe('fractional token counts', () => {
  test('a section that fits maxTokens exactly is sent, not withheld with the one after it into an empty prompt', async () => {
    // intro: 1000 characters = 100 tokens = maxTokens; extra must go, intro stays.
    const root = await app(section('intro', 1, 1000), section('extra', 2, 4))
    const result = await step(surfaceWith(100, tenths), root)
    expect([result.withheld, sent(result), result.promptTokens, result.overBudget]).toEqual([['extra'], ['intro'], 100, false])
  })

  test('a prompt whose exact total fits maxTokens is sent whole', async () => {
    // 1.6 + 3.2 + 3.8 + 0.5 + 0.4 tokens and four separators of 0.2: 10.3
    const root = await app(
      section('a', 1, 16),
      section('b', 2, 32),
      section('c', 3, 38),
      section('d', 4, 5),
      section('e', 5, 4),
    )
    const result = await step(surfaceWith(10.3, tenths), root)
    expect([result.withheld, sent(result), result.promptTokens]).toEqual([[], ['a', 'b', 'c', 'd', 'e'], 10.3])
  })

  test('a prompt with every section withheld counts 0 tokens, not a rounding residue', async () => {
    const root = await app(section('intro', 1, 1000), section('extra', 2, 4))
    const result = await step(surfaceWith(50, tenths), root)
    expect([result.withheld, sent(result), result.promptTokens, result.stablePrefixTokens]).toEqual([['intro', 'extra'], [], 0, 0])
  })

  test('a withheld section comes back once the prompt with it fits the restore threshold exactly', async () => {
    const root = await mount(BARE)
    const extra = signal('e'.repeat(900))
    root.systemPrompt.section(section('intro', 1, 10))
    root.systemPrompt.section({ name: 'extra', order: 2, text: extra })
    const surface = surfaceWith(4.3, tenths)
    expect(sent(await step(surface, root))).toEqual(['intro'])
    // 1 + 0.2 + 3.1 tokens: exactly maxTokens (headroom 0).
    extra.value = 'e'.repeat(31)
    const result = await step(surface, root)
    expect([result.withheld, sent(result), result.promptTokens]).toEqual([[], ['intro', 'extra'], 4.3])
  })
})

describe('integer token counts', () => {
  const huge = 2 ** 52

  test('add as integers up to Number.MAX_SAFE_INTEGER', async () => {
    const counts = (text: string): number => (text.startsWith('a') ? huge : text.startsWith('b') ? huge - 1 : 0)
    const root = await app(section('a', 1, 3), section('b', 2, 3))
    const result = await step(surfaceWith(Number.MAX_SAFE_INTEGER, counts), root)
    expect([result.withheld, result.promptTokens]).toEqual([[], Number.MAX_SAFE_INTEGER])
  })

  test('a total past Number.MAX_SAFE_INTEGER fails the step naming countTokens', async () => {
    const counts = (text: string): number => (text.startsWith('a') || text.startsWith('b') ? huge : 0)
    const root = await app(section('a', 1, 3), section('b', 2, 3))
    await expect(step(surfaceWith(100, counts), root)).rejects.toThrow(
      new RangeError(
        `budget countTokens counts add up to ${2 ** 53} tokens for this prompt, past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); countTokens must return token counts whose sum stays a safe integer`,
      ),
    )
  })
})

describe('counts that would overflow', () => {
  const countOf = (text: string): number => (text.startsWith('z') ? Number.MAX_VALUE : text.length)

  test('two Number.MAX_VALUE counts fail the step naming countTokens instead of withholding everything', async () => {
    const root = await app(section('intro', 1, 10), section('z1', 2, 3), section('z2', 3, 3))
    await expect(step(surfaceWith(100, countOf), root)).rejects.toThrow(/^budget countTokens counts add up to .* past Number\.MAX_SAFE_INTEGER/)
  })

  test('a single count past Number.MAX_SAFE_INTEGER fails the step too', async () => {
    const root = await app(section('intro', 1, 10), section('z1', 2, 3))
    await expect(step(surfaceWith(100, countOf), root)).rejects.toThrow(RangeError)
  })

  test('the failed step leaves the surface as it was: the next step is judged against the step before it', async () => {
    const root = await app(section('intro', 1, 10), section('tail', 2, 10))
    const surface = surfaceWith(15, countOf)
    const first = await step(surface, root)
    expect([first.withheld, sent(first)]).toEqual([['tail'], ['intro']])
    const bad = [root.systemPrompt.section(section('z1', 3, 3)), root.systemPrompt.section(section('z2', 4, 3))]
    await expect(step(surface, root)).rejects.toThrow(RangeError)
    for (const dispose of bad) await dispose()
    const after = await step(surface, root)
    expect([after.events, after.withheld, after.warnings, after.rendered]).toEqual([[], ['tail'], [], first.rendered])
  })
})
