import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { startSimulator } from '../../examples/simulator/index.js'
import { createStepSurface, serializeStep } from '../../src/index.js'
import { walkImportGraph } from './import-graph.js'
import { blockModule, preambleLines, readmeBlocks, type PreambleSources } from './readme-blocks.js'

// The package as a new user gets it: `npm pack` (which runs the prepack build) once, one fresh consumer
// project that installs the tarball with its peers and the provider SDKs from the registry, and in it:
// examples/usage.ts, a peer check and a promptloom/otel consumer type-checked under NodeNext and Bundler
// and run with node; every ```ts block of README.md type-checked (whole programs also run) by the
// conventions in readme-blocks.ts; the first agent step of examples/first-step.ts run against the
// provider simulator over HTTP; CommonJS require(); the NodeNext error without the paths workaround;
// publint and attw on the tarball.

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
function run(command: string, args: readonly string[], cwd: string, timeout = 240_000, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', ...env } }, (error, stdout, stderr) => {
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

/** An example's source as a user copies it: the repository's relative imports become the package's. */
function asConsumer(source: string, file: string): string {
  const rewritten = source.replaceAll("'../src/index.js'", "'promptloom'").replaceAll("'../src/node.js'", "'promptloom/node'").replaceAll("'../src/otel.js'", "'promptloom/otel'")
  if (/from '\.{1,2}\//.test(rewritten)) throw new Error(`${file}: a relative import remains; the consumer copy imports only packages`)
  return rewritten
}

/** The lines between `// #region name` and `// #endregion name` of an example. */
function exampleRegion(file: string, name: string): string {
  const text = readFileSync(join(ROOT, 'examples', file), 'utf8')
  const start = text.indexOf(`// #region ${name}\n`)
  const end = text.indexOf(`// #endregion ${name}`)
  if (start === -1 || end === -1) throw new Error(`examples/${file} has no region "${name}"`)
  return text.slice(start + `// #region ${name}\n`.length, end)
}

/** Runs a consumer program with the Anthropic and OpenAI SDKs pointed at a fresh provider simulator. */
async function runWithSimulator(file: string): Promise<Run> {
  const simulator = await startSimulator()
  try {
    return await run(process.execPath, [file], app, 120_000, {
      ANTHROPIC_BASE_URL: simulator.baseURL('anthropic'),
      ANTHROPIC_API_KEY: 'simulated',
      OPENAI_BASE_URL: simulator.baseURL('openai'),
      OPENAI_API_KEY: 'simulated',
    })
  } finally {
    await simulator.close()
  }
}

/** `require(esm)` runs without a flag: Node 20.19+, 22.12+, 23+. */
function requireEsmByDefault(version: string): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number]
  return major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19)
}

/** The names each public entry point of the installed package exports, types included. */
function packageExports(dist: string): PreambleSources {
  const entries = { promptloom: 'index.d.ts', 'promptloom/node': 'node.d.ts', 'promptloom/otel': 'otel.d.ts' }
  const program = ts.createProgram(
    Object.values(entries).map((file) => join(dist, file)),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true, types: [] },
  )
  const checker = program.getTypeChecker()
  return Object.fromEntries(
    Object.entries(entries).map(([specifier, file]) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(join(dist, file))!)!
      return [specifier, checker.getExportsOfModule(module).map((symbol) => symbol.name)]
    }),
  )
}

interface Diagnostic {
  readonly file: string
  readonly line: number
  readonly text: string
}

/**
 * Type-checks a consumer project in process, file by file: tsc stops at the first file with a syntax error,
 * which would hide the other README blocks' errors. Emits when the project does.
 */
function checkProject(project: string): Diagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(app, project), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(`${project}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`)
    },
  })!
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
  const found: Diagnostic[] = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((diagnostic) => ({
    file: '',
    line: 0,
    text: `error TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
  }))
  for (const name of config.fileNames) {
    const source = program.getSourceFile(name)!
    const syntactic = program.getSyntacticDiagnostics(source)
    for (const diagnostic of syntactic.length > 0 ? syntactic : program.getSemanticDiagnostics(source)) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      found.push({ file: relative(app, name), line: line + 1, text: `error TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}` })
    }
  }
  if (config.options.noEmit !== true) program.emit()
  return found
}

const checked = new Map<string, Diagnostic[]>()
function diagnosticsOf(project: string): Diagnostic[] {
  if (!checked.has(project)) checked.set(project, checkProject(project))
  return checked.get(project)!
}

// The CommonJS consumer: promptloom's own signal drives change events; one from require('@preact/signals-core')
// (a second copy, the CommonJS build) is refused.
const CJS_CHECK = `const { Context } = require('cordis')
const { renderPrompt, signal, SystemPrompt } = require('promptloom')
const { createSessionLogWriter } = require('promptloom/node')
const cjsSignals = require('@preact/signals-core')

async function main() {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  const branch = signal('main')
  app.systemPrompt.variable('branch', branch)
  app.systemPrompt.section({ name: 'repo', order: 100, text: 'On {{branch}}.' })
  let changes = 0
  app.on('system-prompt/change', () => void changes++)
  branch.value = 'dev'
  console.log(\`\${renderPrompt(await app.systemPrompt.assemble())}; changes after one write: \${changes}; node entry: \${typeof createSessionLogWriter}\`)
  try {
    app.systemPrompt.variable('other', cjsSignals.signal('x'))
  } catch (error) {
    console.log(\`\${error.name}: \${error.message}\`)
  }
}
main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
`

// The same under TypeScript: a .cts file (CommonJS output) importing the package under NodeNext.
const CTS_CHECK = `import { Context } from 'cordis'
import { renderPrompt, signal, SystemPrompt } from 'promptloom'

export async function render(): Promise<string> {
  const app = new Context()
  await app.plugin(SystemPrompt, { includeHarnessIdentity: false })
  app.systemPrompt.variable('branch', signal('main'))
  return renderPrompt(await app.systemPrompt.assemble())
}
`

// What a user writes first, compiled under NodeNext without the paths workaround.
const NO_PATHS_CHECK = `import { Context } from 'cordis'
import { SystemPrompt } from 'promptloom'

const app = new Context()
await app.plugin(SystemPrompt)
`

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

// Type-checking a consumer project takes tens of seconds on a busy machine.
vi.setConfig({ testTimeout: 240_000 })

const README_BLOCKS = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'))
const blockFile = (index: number): string => `readme-${index}.ts`

let work: string
let tarball: string
let packed: { readonly files: readonly { readonly path: string }[] }
let app: string
let preambleSources: PreambleSources

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
      ...['@anthropic-ai/sdk', 'openai', 'ai', '@ai-sdk/anthropic', 'gpt-tokenizer'].map((name) => `${name}@${manifest.devDependencies[name]}`),
    ],
    app,
  )
  writeFileSync(join(app, 'usage.ts'), asConsumer(readFileSync(join(ROOT, 'examples', 'usage.ts'), 'utf8'), 'examples/usage.ts'))
  writeFileSync(join(app, 'peer.ts'), PEER_CHECK)
  writeFileSync(join(app, 'otel.ts'), OTEL_CHECK)
  writeFileSync(join(app, 'cjs.cjs'), CJS_CHECK)
  writeFileSync(join(app, 'cjs-types.cts'), CTS_CHECK)
  writeFileSync(join(app, 'no-paths.ts'), NO_PATHS_CHECK)
  writeFileSync(join(app, 'first-step.ts'), asConsumer(exampleRegion('first-step.ts', 'first-step'), 'examples/first-step.ts'))
  preambleSources = packageExports(join(app, 'node_modules', 'promptloom', 'dist'))
  for (const block of README_BLOCKS) writeFileSync(join(app, blockFile(block.index)), blockModule(block, preambleSources))
  const files = ['usage.ts', 'peer.ts', 'otel.ts', 'cjs-types.cts']
  const readmeFiles = ['first-step.ts', ...README_BLOCKS.map((block) => blockFile(block.index))]
  const paths = { cordis: ['./node_modules/promptloom/dist/vendor/cordis/index.d.ts'] }
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
        // The workaround for cordis 4.0.0-rc.10's extensionless re-exports (docs/install.md).
        paths,
      },
      files,
    }),
  )
  writeFileSync(
    join(app, 'tsconfig.bundler.json'),
    JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, skipLibCheck: true, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, files: files.filter((file) => file.endsWith('.ts')) }),
  )
  // README blocks and the first step as a user's project compiles them: the SDKs' declarations are not ours to check.
  writeFileSync(
    join(app, 'tsconfig.readme-nodenext.json'),
    JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, skipLibCheck: true, module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out', paths }, files: readmeFiles }),
  )
  writeFileSync(
    join(app, 'tsconfig.readme-bundler.json'),
    JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, skipLibCheck: true, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, files: readmeFiles }),
  )
  for (const skipLibCheck of [true, false]) {
    writeFileSync(
      join(app, `tsconfig.no-paths${skipLibCheck ? '' : '-libcheck'}.json`),
      JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, skipLibCheck, module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true }, files: ['no-paths.ts'] }),
    )
  }
}, 300_000)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

/** One tsc run per project, shared by the tests that read its diagnostics. */
const compiled = new Map<string, Promise<Run>>()
function compile(project: string): Promise<Run> {
  if (!compiled.has(project)) compiled.set(project, run(process.execPath, [TSC, '-p', project], app))
  return compiled.get(project)!
}

describe('the packed tarball', () => {
  test('holds the build output, its declarations, package.json, README, CHANGELOG and LICENSE, and no sources, source maps or tests', () => {
    const paths = packed.files.map((file) => file.path)
    expect(paths.filter((path) => !path.startsWith('dist/')).sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json'])
    expect(paths.filter((path) => /\.(ts|js)\.map$|^src\/|^test\//.test(path))).toEqual([])
    expect(paths).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts', 'dist/otel.js', 'dist/otel.d.ts', 'dist/vendor/cordis/index.d.ts']),
    )
  })

  test('ships a Keep a Changelog CHANGELOG, the MIT LICENSE, and a manifest naming the repository, homepage, bug tracker and keywords', () => {
    const installed = join(app, 'node_modules', 'promptloom')
    const changelog = readFileSync(join(installed, 'CHANGELOG.md'), 'utf8')
    expect(changelog).toMatch(/^# Changelog\n/)
    expect(changelog).toContain('[Keep a Changelog](https://keepachangelog.com/')
    expect(changelog).toMatch(/^## \[Unreleased\]$/m)
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} promptloom contributors\n/)
    const metadata = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>
    expect(metadata).toMatchObject({
      license: 'MIT',
      repository: { type: 'git', url: 'git+https://github.com/promptloom/promptloom.git' },
      homepage: 'https://github.com/promptloom/promptloom#readme',
      bugs: { url: 'https://github.com/promptloom/promptloom/issues' },
      keywords: expect.arrayContaining(['system-prompt', 'cordis']),
    })
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

  test('promptloom/node is where node:fs and node:path are imported, and it loads no OpenTelemetry', () => {
    const graph = walkImportGraph(join(dist(), 'node.js'))
    expect(graph.violations).toEqual([
      'surface/session-log-file.js imports the Node built-in "node:fs"',
      'surface/session-log-file.js imports the Node built-in "node:path"',
    ])
    expect(graph.external).toEqual([])
  })

  test('promptloom/otel is Node-free too, and the only entry point that loads @opentelemetry/api', () => {
    const graph = walkImportGraph(join(dist(), 'otel.js'))
    expect(graph.violations).toEqual([])
    expect(graph.external).toEqual(['@opentelemetry/api'])
    expect(graph.files).toContain('providers/fnv1a64.js')
    expect(walkImportGraph(join(dist(), 'otel.d.ts')).violations).toEqual([])
  })
})

describe('a consumer project', () => {
  test('type-checks examples/usage.ts, the peer check, the otel consumer and a .cts file under module/moduleResolution NodeNext', async () => {
    const result = await compile('tsconfig.nodenext.json')
    expect(result.stdout + result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  test('type-checks them under module ESNext, moduleResolution Bundler (with no paths workaround)', async () => {
    const result = await compile('tsconfig.bundler.json')
    expect(result.stdout + result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  test('runs examples/usage.ts with node: two steps, a full stable prefix at step 2, a replayed log', async () => {
    await compile('tsconfig.nodenext.json')
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
    await compile('tsconfig.nodenext.json')
    const { code, stdout, stderr } = await run(process.execPath, [join('out', 'peer.js')], app)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout.trim()).toBe('same signal: true; changes after one write: 1; effect saw devdev')
  })

  test("without the paths workaround, NodeNext's first error is TS2693 'Context' only refers to a type (docs/install.md)", async () => {
    const result = await compile('tsconfig.no-paths.json')
    expect(result.code).not.toBe(0)
    expect(result.stdout.trim()).toBe("no-paths.ts(4,17): error TS2693: 'Context' only refers to a type, but is being used as a value here.")
  })

  test('with skipLibCheck false, TS2834 in cordis\' declarations and TS2305 in promptloom\'s come with it (docs/install.md)', async () => {
    const result = await compile('tsconfig.no-paths-libcheck.json')
    const where = (file: string): string => (file.startsWith('node_modules/promptloom/') ? "promptloom's declarations" : file)
    const codes = result.stdout.trim().split('\n').map((line) => /^(.+?)\(\d+,\d+\): error (TS\d+)/.exec(line)!).map((match) => `${where(match[1]!)} ${match[2]}`)
    expect([...new Set(codes)].sort()).toEqual(['no-paths.ts TS2693', 'node_modules/cordis/lib/index.d.ts TS2834', "promptloom's declarations TS2305"])
  })
})

describe('the first agent step (examples/first-step.ts, region first-step) in the consumer project', () => {
  test('is at most 15 lines, imports included', () => {
    expect(exampleRegion('first-step.ts', 'first-step').trimEnd().split('\n').length).toBeLessThanOrEqual(15)
  })

  test('type-checks under NodeNext and Bundler', async () => {
    for (const project of ['tsconfig.readme-nodenext.json', 'tsconfig.readme-bundler.json']) {
      expect(diagnosticsOf(project).filter((diagnostic) => diagnostic.file === 'first-step.ts')).toEqual([])
    }
  })

  test('runs against the provider simulator over HTTP: nothing cached on the first call, the system prompt read from cache on the second', async () => {
    diagnosticsOf('tsconfig.readme-nodenext.json')
    const { code, stdout, stderr } = await runWithSimulator(join('out', 'first-step.js'))
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expectCachedOnSecondCall(stdout)
  })

  test("is README.md's first ts block, a whole program, as a user copies it", () => {
    expect(README_BLOCKS[0]).toMatchObject({ run: true, code: asConsumer(exampleRegion('first-step.ts', 'first-step'), 'examples/first-step.ts') })
  })

  test('copied from README.md, runs against the provider simulator and reads the system prompt from cache on its second call', async () => {
    diagnosticsOf('tsconfig.readme-nodenext.json')
    const { code, stdout, stderr } = await runWithSimulator(join('out', blockFile(README_BLOCKS[0]!.index).replace(/\.ts$/, '.js')))
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expectCachedOnSecondCall(stdout)
  })
})

/** The first step's two output lines: nothing cached on the first call, most of the input on the second. */
function expectCachedOnSecondCall(stdout: string): void {
  const calls = stdout.trim().split('\n').map((line) => /^cached (\d+) of (\d+) input tokens$/.exec(line))
  expect(calls).toHaveLength(2)
  const [first, second] = calls.map((match) => ({ cached: Number(match![1]), input: Number(match![2]) })) as [{ cached: number; input: number }, { cached: number; input: number }]
  expect(first.cached).toBe(0)
  expect(second.cached).toBeGreaterThan(0)
  expect(second.cached).toBeLessThan(second.input)
}

describe('every ```ts block of README.md in the consumer project (conventions: test/package/readme-blocks.ts)', () => {
  test('README.md has ts blocks, and their projects have no option or global error', () => {
    expect(README_BLOCKS.length).toBeGreaterThan(0)
    for (const project of ['tsconfig.readme-nodenext.json', 'tsconfig.readme-bundler.json']) {
      expect(diagnosticsOf(project).filter((diagnostic) => diagnostic.file === '')).toEqual([])
    }
  })

  test.each(README_BLOCKS.map((block) => [`${block.index} (README.md:${block.line}${block.run ? ', run' : ''})`, block] as const))(
    'block %s type-checks under NodeNext and Bundler',
    (_, block) => {
      const offset = preambleLines(block, preambleSources)
      for (const project of ['tsconfig.readme-nodenext.json', 'tsconfig.readme-bundler.json']) {
        const errors = diagnosticsOf(project)
          .filter((diagnostic) => diagnostic.file === blockFile(block.index))
          .map((diagnostic) => `README.md:${block.line + diagnostic.line - offset - 1}: ${diagnostic.text} (${project})`)
        expect(errors).toEqual([])
      }
    },
  )

  const programs = README_BLOCKS.filter((block) => block.run)
  test.runIf(programs.length > 0).each(programs.map((block) => [`${block.index} (README.md:${block.line})`, block] as const))(
    'whole program %s runs with node against the provider simulator',
    async (_, block) => {
      diagnosticsOf('tsconfig.readme-nodenext.json')
      const { code, stderr } = await runWithSimulator(join('out', blockFile(block.index).replace(/\.ts$/, '.js')))
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    },
  )
})

describe('CommonJS consumers', () => {
  test(`require('promptloom') ${requireEsmByDefault(process.versions.node) ? 'works' : 'fails with ERR_REQUIRE_ESM'} on Node ${process.versions.node}; a signal from require('@preact/signals-core') is refused`, async () => {
    const { code, stdout, stderr } = await run(process.execPath, ['cjs.cjs'], app)
    if (!requireEsmByDefault(process.versions.node)) {
      expect(stderr).toContain('ERR_REQUIRE_ESM')
      return
    }
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const [render, refusal] = stdout.trim().split('\n')
    expect(render).toBe('On dev.; changes after one write: 1; node entry: function')
    expect(refusal).toMatch(/^TypeError: prompt variable "other" value is a signal of another copy of @preact\/signals-core .*import signal and computed from 'promptloom'/)
  })
})

describe('promptloom/otel in the consumer project', () => {
  test('runs with @opentelemetry/api alone: a traced step returns the surface\'s result', async () => {
    await compile('tsconfig.nodenext.json')
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
