import { describe, expect, test } from 'vitest'
import { blockModule, preambleLines, readmeBlocks, topLevelNames } from './readme-blocks.js'

const markdown = [
  '# Title',
  '',
  '```sh',
  'npm install promptloom',
  '```',
  '',
  '<!-- run -->',
  '',
  '```ts',
  "import { Context } from 'cordis'",
  'const app = new Context()',
  '```',
  '',
  '````md',
  '```ts',
  'not a block: inside a longer fence',
  '```',
  '````',
  '```typescript',
  'const request = toAnthropic({ assembly, messages })',
  '```',
  '```text',
  'section({ name, order })',
  '```',
].join('\n')

describe('README ts blocks', () => {
  test('finds ts and typescript fences with their first code line, skips other languages and nested fences', () => {
    expect(readmeBlocks(markdown)).toEqual([
      { index: 1, line: 10, code: "import { Context } from 'cordis'\nconst app = new Context()\n", run: true },
      { index: 2, line: 20, code: 'const request = toAnthropic({ assembly, messages })\n', run: false },
    ])
  })

  test('the run marker counts only as the last non-blank line before the fence', () => {
    expect(readmeBlocks('<!-- run -->\nSome prose.\n```ts\nx\n```\n')[0]!.run).toBe(false)
  })

  test('an unclosed fence is an error naming its line', () => {
    expect(() => readmeBlocks('text\n```ts\nconst x = 1\n')).toThrow('README.md:2: the ``` fence opened here is never closed')
  })

  test('top-level names: imports of every form, destructured variables, functions, classes and types', () => {
    const code = [
      "import Anthropic from '@anthropic-ai/sdk'",
      "import * as otel from '@opentelemetry/api'",
      "import { a, b as c } from 'x'",
      'const { d, e: [f, , g], ...h } = value',
      'let i = 1, j = 2',
      'function k() { const inner = 1 }',
      'class L {}',
      'interface M {}',
      'type N = string',
      'for (const loop of []) {}',
    ].join('\n')
    expect([...topLevelNames(code)].sort()).toEqual(['Anthropic', 'L', 'M', 'N', 'a', 'c', 'd', 'f', 'g', 'h', 'i', 'j', 'k', 'otel'])
  })

  test('a fragment imports only the preamble names it does not bind, the first source winning a shared name', () => {
    const sources = { './readme-preamble.js': ['app', 'assembly'], promptloom: ['default', 'toAnthropic', 'assembly', 'SystemPrompt'], 'promptloom/node': ['readSessionLog'] }
    const block = { index: 1, line: 5, code: "import { SystemPrompt } from 'promptloom'\nconst app = 1\n", run: false }
    expect(blockModule(block, sources)).toBe(
      [
        "import { assembly } from './readme-preamble.js'",
        "import { toAnthropic } from 'promptloom'",
        "import { readSessionLog } from 'promptloom/node'",
        "import { SystemPrompt } from 'promptloom'",
        'const app = 1',
        'export {}',
        '',
      ].join('\n'),
    )
    expect(preambleLines(block, sources)).toBe(3)
    expect(blockModule({ ...block, code: 'toAnthropic\n' }, { a: ['app', 'toAnthropic'] })).toBe("import { app, toAnthropic } from 'a'\ntoAnthropic\nexport {}\n")
  })

  test('a run block is compiled exactly as written', () => {
    const block = { index: 1, line: 5, code: 'console.log(assembly)\n', run: true }
    expect(blockModule(block, { promptloom: ['assembly'] })).toBe('console.log(assembly)\n')
    expect(preambleLines(block, { promptloom: ['assembly'] })).toBe(0)
  })
})
