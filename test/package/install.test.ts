import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createStepSurface, serializeStep } from '../../src/index.js'
import { walkImportGraph } from './import-graph.js'

// The package as a new user gets it: `npm pack` (which runs the prepack
// build), a fresh consumer project that installs the tarball with its peers
// from the registry, the README Usage block and a promptloom/otel consumer
// type-checked under NodeNext and Bundler and run with node, and publint and
// attw on the tarball.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const ATTW = join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js')
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  readonly peerDependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command without stdin (as in CI) and resolves with its exit code and output, never rejecting. */
function run(command: string, args: readonly string[], cwd: string, timeout = 240_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
      resolve({ code, stdout, stderr })
    })
    child.stdin?.end()
  })
}

async function ok(command: string, args: readonly string[], cwd: string): Promise<string> {
  const result = await run(command, args, cwd)
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

/** The README's Usage block with the package imports, which is what a user copies. */
function readmeUsage(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  return /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Usage')))![1]!
}

// One copy of the reactive runtime: the app's signals drive promptloom's change events.
const PEER_CHECK = `import { signal as appSignal } from '@preact/signals-core'
import { Context } from 'cordis'
import { computed, effect, signal, SystemPrompt } from 'promptloom'
import type { ReplayedStep } from 'promptloom'
import type { SessionLogWriter } from 'promptloom/node'

const app = new Context()
await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
const branch = appSignal('main')
app.systemPrompt.variable('branch', branch)
app.systemPrompt.section({ name: 'repo', order: 100, text: 'On {{branch}}.' })
let changes = 0
app.on('system-prompt/change', () => void changes++)
branch.value = 'dev'
const doubled = computed(() => branch.value + branch.value)
let seen = ''
effect(() => void (seen = doubled.value))
console.log(\`same signal: \${signal === appSignal}; changes after one write: \${changes}; effect saw \${seen}\`)

// The types are real, not any: each of these must be an error (type-checked, never run).
export function typeChecks(writer: SessionLogWriter, step: ReplayedStep): void {
  // @ts-expect-error a section needs a name
  app.systemPrompt.section({ order: 1, text: 'x' })
  // @ts-expect-error a replayed step's prompt is a string
  const prompt: number = step.prompt
  // @ts-expect-error write takes a StepResult
  writer.write('step')
  void prompt
}
`

// promptloom/otel with the API alone (no SDK registered, so its tracer is a no-op): the subpath resolves,
// its types are real and a traced step returns the surface's own result.
const OTEL_CHECK = `import { createStepSurface } from 'promptloom'
import { STEP_SPAN, withTracing } from 'promptloom/otel'

const traced = withTracing(createStepSurface(), { agent: 'agent-1' })
const assembly = { sections: [{ name: 'intro', order: 0, text: 'Hello.' }], contexts: [], variables: {}, tools: [] }
const result = traced.step({ assembly })
traced.observeUsage({ inputTokens: 3, cachedInputTokens: 0 })
traced.end()
console.log(\`\${STEP_SPAN}: step \${result.step}, \${result.rendered.text}\`)

// Type-checked, never run: a bad option is a type error.
export function typeChecks(): void {
  // @ts-expect-error activeSpan is 'child' or 'events'
  withTracing(createStepSurface(), { activeSpan: 'parent' })
}
`

const COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2023'],
  strict: true,
  types: ['node'],
  forceConsistentCasingInFileNames: true,
}

let work: string
let tarball: string
let packed: { readonly files: readonly { readonly path: string }[] }
let app: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'promptloom-package-'))
  const packDir = join(work, 'pack')
  mkdirSync(packDir)
  const out = await ok('npm', ['pack', '--json', '--pack-destination', packDir], ROOT)
  packed = (JSON.parse(out.slice(out.indexOf('[\n'))) as (typeof packed & { filename: string })[])[0]!
  tarball = join(packDir, (packed as { filename?: string }).filename!)

  app = join(work, 'consumer')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2))
  await ok(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--save-exact',
      tarball,
      `cordis@${manifest.peerDependencies.cordis}`,
      `@preact/signals-core@${manifest.peerDependencies['@preact/signals-core']}`,
      `@types/node@${manifest.devDependencies['@types/node']}`,
      `@opentelemetry/api@${manifest.devDependencies['@opentelemetry/api']}`,
    ],
    app,
  )
  writeFileSync(join(app, 'usage.ts'), readmeUsage())
  writeFileSync(join(app, 'peer.ts'), PEER_CHECK)
  writeFileSync(join(app, 'otel.ts'), OTEL_CHECK)
  const files = ['usage.ts', 'peer.ts', 'otel.ts']
  writeFileSync(
    join(app, 'tsconfig.nodenext.json'),
    JSON.stringify({
      compilerOptions: {
        ...COMPILER_OPTIONS,
        // Declarations checked too: ours and the vendored cordis ones must be clean under NodeNext.
        skipLibCheck: false,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        outDir: 'out',
        // The workaround for cordis 4.0.0-rc.10's extensionless re-exports (README "Install").
        paths: { cordis: ['./node_modules/promptloom/dist/vendor/cordis/index.d.ts'] },
      },
      files,
    }),
  )
  writeFileSync(
    join(app, 'tsconfig.bundler.json'),
    JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, skipLibCheck: true, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, files }),
  )
}, 300_000)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe('the packed tarball', () => {
  test('holds the build output, its declarations, package.json, README and LICENSE, and no sources, source maps or tests', () => {
    const paths = packed.files.map((file) => file.path)
    expect(paths.filter((path) => !path.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json'])
    expect(paths.filter((path) => /\.(ts|js)\.map$|^src\/|^test\//.test(path))).toEqual([])
    expect(paths).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts', 'dist/otel.js', 'dist/otel.d.ts', 'dist/vendor/cordis/index.d.ts']),
    )
  })

  test('installs with @preact/signals-core as a peer: one copy in the consumer, none nested under promptloom', async () => {
    const listed = JSON.parse(await ok('npm', ['ls', '@preact/signals-core', '--all', '--json', '--parseable=false'], app)) as {
      dependencies: Record<string, { version: string; dependencies?: Record<string, unknown> }>
    }
    expect(Object.keys(listed.dependencies).sort()).toEqual(['@preact/signals-core', 'promptloom'])
    expect(listed.dependencies.promptloom!.dependencies).toEqual({ '@preact/signals-core': expect.objectContaining({}) })
    expect(() => readFileSync(join(app, 'node_modules', 'promptloom', 'node_modules', '@preact', 'signals-core', 'package.json'))).toThrow()
  })
})

describe('the package root is Node-free (walked in the installed dist/)', () => {
  const dist = (): string => join(app, 'node_modules', 'promptloom', 'dist')

  test('no module reachable from dist/index.js imports a Node built-in or references Buffer or process', () => {
    const graph = walkImportGraph(join(dist(), 'index.js'))
    expect(graph.violations).toEqual([])
    expect(graph.external).toEqual(['@preact/signals-core', 'cordis'])
    expect(graph.files).toContain('surface/session-log.js')
    expect(graph.files).not.toContain('surface/session-log-file.js')
  })

  test('no declaration reachable from dist/index.d.ts needs Node types', () => {
    const graph = walkImportGraph(join(dist(), 'index.d.ts'))
    expect(graph.violations).toEqual([])
    expect(graph.external).toEqual(['@preact/signals-core', 'cordis'])
  })

  test('promptloom/node is where node:fs is imported, and it loads no OpenTelemetry', () => {
    const graph = walkImportGraph(join(dist(), 'node.js'))
    expect(graph.violations).toEqual(['surface/session-log-file.js imports the Node built-in "node:fs"'])
    expect(graph.external).toEqual([])
  })

  test('promptloom/otel is Node-free too, and the only entry point that loads @opentelemetry/api', () => {
    const graph = walkImportGraph(join(dist(), 'otel.js'))
    expect(graph.violations).toEqual([])
    expect(graph.external).toEqual(['@opentelemetry/api', '@preact/signals-core'])
    expect(graph.files).toContain('otel/with-tracing.js')
    expect(walkImportGraph(join(dist(), 'otel.d.ts')).violations).toEqual([])
  })
})

describe('a consumer project', () => {
  test('type-checks the README Usage block and the peer check under module/moduleResolution NodeNext', async () => {
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.nodenext.json'], app)
    expect(result.stdout + result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  test('type-checks them under module ESNext, moduleResolution Bundler (with no paths workaround)', async () => {
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.bundler.json'], app)
    expect(result.stdout + result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  test('runs the README Usage block with node: two steps, a full stable prefix at step 2, a replayed log', async () => {
    const { code, stdout, stderr } = await run(process.execPath, [join('out', 'usage.js')], app)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout.split('\n').filter((line) => line.startsWith('---'))).toEqual([
      '--- step 1: tools read, stable prefix 0 chars',
      '--- step 2: tools read, stable prefix 100 chars',
    ])
    expect(stdout).toContain('You work for the platform team.\n\nPlan before you edit.\n\nWork in /work/agent-1.')
    expect(stdout).toContain('replayed 2 steps from the session log')
  })

  test("a write to the app's own signal emits system-prompt/change (one reactive runtime)", async () => {
    const { code, stdout, stderr } = await run(process.execPath, [join('out', 'peer.js')], app)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout.trim()).toBe('same signal: true; changes after one write: 1; effect saw devdev')
  })
})

describe('promptloom/otel in the consumer project', () => {
  test('runs with @opentelemetry/api alone: a traced step returns the surface\'s result', async () => {
    const { code, stdout, stderr } = await run(process.execPath, [join('out', 'otel.js')], app)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout.trim()).toBe('promptloom.step: step 1, Hello.')
  })

  test('the installed manifest declares @opentelemetry/api an optional peer, so installing promptloom does not pull it in', () => {
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'promptloom', 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
    }
    expect(installed.peerDependencies['@opentelemetry/api']).toBe(manifest.peerDependencies['@opentelemetry/api'])
    expect(installed.peerDependenciesMeta).toEqual({ '@opentelemetry/api': { optional: true } })
  })
})

describe('the installed promptloom bin', () => {
  /** A two-step session log, written by the repo's own surface into the consumer project. */
  function writeLog(): string {
    const surface = createStepSurface()
    const assembly = (text: string) => ({ sections: [{ name: 'intro', order: 0, text }], contexts: [], variables: {}, tools: [] })
    const path = join(app, 'agent-1.jsonl')
    writeFileSync(path, serializeStep(surface.step({ assembly: assembly('Hello.') })) + serializeStep(surface.step({ assembly: assembly('Hello again.') })))
    return path
  }

  test('report writes one self-contained HTML file and inspect prints a row per step', async () => {
    const log = writeLog()
    const bin = join(app, 'node_modules', '.bin', 'promptloom')
    const report = await run(bin, ['report', log, '-o', join(app, 'report.html')], app)
    expect({ code: report.code, stderr: report.stderr }).toEqual({ code: 0, stderr: '' })
    const html = readFileSync(join(app, 'report.html'), 'utf8')
    expect(html.startsWith('<!doctype html>') || html.startsWith('<!DOCTYPE html>')).toBe(true)
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="http/)
    const inspect = await run(bin, ['inspect', log], app)
    expect(inspect.code).toBe(0)
    expect(inspect.stdout.split('\n').filter((line) => /^\s+[12]\s/.test(line))).toHaveLength(2)
  })
})

describe('package linters on the tarball', () => {
  test('publint reports nothing, suggestions included', async () => {
    const data = readFileSync(tarball)
    const { messages, pkg } = await publint({ pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) }, level: 'suggestion', strict: true })
    expect(messages.map((message) => `${message.type}: ${formatMessage(message, pkg) ?? message.code}`)).toEqual([])
  })

  test('attw --profile esm-only finds no problem in ".", "./node", "./otel" or "./package.json"', async () => {
    const result = await run(process.execPath, [ATTW, tarball, '--profile', 'esm-only', '--format', 'json'], app)
    const report = JSON.parse(result.stdout) as { analysis: { entrypoints: Record<string, unknown> }; problems?: unknown }
    expect(Object.keys(report.analysis.entrypoints)).toEqual(['.', './node', './otel', './package.json'])
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  })
})
