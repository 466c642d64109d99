import { describe, expect, test } from 'vitest'
import { blockModule, preambleLines, preambleVariables, readmeBlocks, topLevelNames } from './readme-blocks.js'

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

  test('a fragment declares the preamble variables and imports the exports it does not bind, the first source winning a shared name', () => {
    const sources = { promptloom: ['default', 'toAnthropic', 'SystemPrompt', 'shared'], 'promptloom/node': ['readSessionLog', 'shared'], 'promptloom/otel': [] }
    const block = { index: 1, line: 5, code: "import { SystemPrompt } from 'promptloom'\nconst app = 1\nlet { history } = x\n", run: false }
    const module = blockModule(block, sources).split('\n')
    expect(module[0]).toMatch(/^declare let ctx: import\('cordis'\)\.Context, systemPrompt: /)
    expect(module[0]).not.toMatch(/\b(app|history):/)
    expect(module[0]).toContain("messages: import('@anthropic-ai/sdk').default.MessageParam[]")
    expect(module.slice(1)).toEqual([
      "import { toAnthropic, shared } from 'promptloom'",
      "import { readSessionLog } from 'promptloom/node'",
      '',
      "import { SystemPrompt } from 'promptloom'",
      'const app = 1',
      'let { history } = x',
      'export {}',
      '',
    ])
    expect(preambleLines(block, sources)).toBe(4)
  })

  test('client, messages and history follow the request builder a fragment calls', () => {
    expect(preambleVariables('toAnthropic({ assembly })').client).toBe("import('@anthropic-ai/sdk').default")
    expect(preambleVariables('toOpenAIChat({ assembly })').history).toBe("import('openai').default.Chat.ChatCompletionMessageParam[]")
    expect(preambleVariables('toOpenAIResponses({ assembly })').messages).toBe("import('openai').default.Responses.ResponseInputItem[]")
    const aiSdk = preambleVariables('generateText({ model, ...toAISDK({ assembly, messages }) })')
    expect(aiSdk).toMatchObject({ model: "import('ai').LanguageModel", messages: "import('ai').ModelMessage[]" })
    expect(aiSdk).not.toHaveProperty('client')
  })

  test('a run block is compiled exactly as written', () => {
    const block = { index: 1, line: 5, code: 'console.log(assembly)\n', run: true }
    expect(blockModule(block, { promptloom: ['toAnthropic'] })).toBe('console.log(assembly)\n')
    expect(preambleLines(block, { promptloom: ['toAnthropic'] })).toBe(0)
  })
})
