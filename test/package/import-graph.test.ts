import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { walkImportGraph } from './import-graph.js'

// The checker behind install.test.ts's Node-free root test, run on small
// fixtures so it is seen to catch each kind of violation.

const dir = mkdtempSync(join(tmpdir(), 'promptloom-graph-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function fixture(name: string, files: Record<string, string>): string {
  const root = join(dir, name)
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, file, '..'), { recursive: true })
    writeFileSync(join(root, file), text)
  }
  return join(root, 'index.js')
}

describe('walkImportGraph', () => {
  test('follows relative imports and re-exports, and lists bare packages as external', () => {
    const entry = fixture('clean', {
      'index.js': "export { a } from './a.js'\nimport 'cordis'\n",
      'a.js': "import { computed } from '@preact/signals-core'\nexport const a = () => import('./lazy/b.js')\n",
      'lazy/b.js': '// Buffer and process in a comment are fine\nexport const b = "process.env"\n',
    })
    expect(walkImportGraph(entry)).toEqual({
      files: ['a.js', 'index.js', 'lazy/b.js'],
      external: ['@preact/signals-core', 'cordis'],
      violations: [],
    })
  })

  test('reports node: imports and bare built-ins, however deep', () => {
    const entry = fixture('builtins', {
      'index.js': "export * from './a.js'\n",
      'a.js': "import { readFileSync } from 'node:fs'\nimport path from 'path'\nexport * from './b.js'\n",
      'b.js': "export const c = () => import('fs/promises')\n",
    })
    expect(walkImportGraph(entry).violations).toEqual([
      'a.js imports the Node built-in "node:fs"',
      'a.js imports the Node built-in "path"',
      'b.js imports the Node built-in "fs/promises"',
    ])
  })

  test('reports Buffer and process references but not properties or local variables of the same name', () => {
    const entry = fixture('globals', {
      'index.js':
        'export const n = Buffer.byteLength("x")\nexport const o = { process: 1 }.process\nexport const e = process.env\n' +
        'export function f() { const global = {}; return global }\n',
    })
    expect(walkImportGraph(entry).violations).toEqual([
      'index.js:1 references the Node global Buffer',
      'index.js:3 references the Node global process',
    ])
  })

  test('in declaration files, follows .js specifiers to .d.ts and reports Node type references', () => {
    const root = join(dir, 'types')
    fixture('types', {
      'index.d.ts': '/// <reference types="node" />\nexport * from \'./a.js\'\nexport * from \'./missing.js\'\n',
      'a.d.ts': "export declare function f(): import('node:fs').Stats\n",
    })
    expect(walkImportGraph(join(root, 'index.d.ts'))).toEqual({
      files: ['a.d.ts', 'index.d.ts'],
      external: [],
      violations: [
        'index.d.ts references Node\'s types (/// <reference types="node" />)',
        'index.d.ts imports "./missing.js", which does not exist',
        'a.d.ts imports the Node built-in "node:fs"',
      ],
    })
  })
})
