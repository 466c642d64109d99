import { execFile } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { beforeAll, describe, expect, test } from 'vitest'

// Checks the API reference `npm run docs` builds (typedoc.json, with its plugin
// and treatWarningsAsErrors) as a reader gets it: the README's first part as
// the landing page, modules named by their import specifiers, exports grouped
// by task, `@example`s that type-check against the current API, and no Cordis
// members on SystemPrompt. `npm test` builds it first (its script runs `npm run
// docs` before vitest, so a failing build stops CI with TypeDoc's own output);
// run any other way, this file runs `npm run docs` itself.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** Where `npm run docs` writes the reference and its JSON copy: typedoc.json's `out` and `json`. */
const CONFIG = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { out: string; json: string }
const HTML = join(ROOT, CONFIG.out)
const JSON_COPY = join(ROOT, CONFIG.json)
/** Under `npm test` the script has just built the reference (and would have stopped had the build failed). */
const BUILT_BY_SCRIPT = process.env.npm_lifecycle_event === 'test'
const TASK_GROUPS = ['Registry', 'Scopes', 'Rendering', 'Step surface', 'Providers', 'Logs & CLI', 'Signals']
const MODULES = ['promptloom', 'promptloom/node', 'promptloom/otel']
const LANDING_END = '<!-- api-landing-end -->'

/** The entry points that must carry an `@example`, as `module export[.member]`. */
const EXAMPLED = [
  'promptloom SystemPrompt',
  'promptloom SystemPrompt.assemble',
  'promptloom createScope',
  'promptloom render',
  'promptloom createStepSurface',
  'promptloom StepSurface.observeUsage',
  'promptloom toAnthropic',
  'promptloom toOpenAIChat',
  'promptloom toOpenAIResponses',
  'promptloom toAISDK',
  'promptloom/node createSessionLogWriter',
  'promptloom/otel withTracing',
]

/** The names a Cordis `Service` subclass would inherit (statics, instance members). */
const CORDIS_MEMBERS = ['ctx', 'fork', 'name', 'config', 'check', 'extend', 'init', 'invoke', 'resolveConfig', 'tracker', 'hasInstance']

/** TypeDoc's JSON output, as far as these tests read it. */
interface JsonComment {
  readonly summary?: readonly { readonly text: string }[]
  readonly blockTags?: readonly { readonly tag: string; readonly content: readonly { readonly text: string }[] }[]
}
interface JsonReflection {
  readonly name: string
  readonly kind: number
  readonly flags?: { readonly isInherited?: boolean; readonly isExternal?: boolean }
  readonly comment?: JsonComment
  readonly signatures?: readonly JsonReflection[]
  readonly children?: readonly JsonReflection[]
  readonly groups?: readonly { readonly title: string; readonly children?: readonly number[] }[]
  readonly id: number
}

let build: { code: number | null; stdout: string; stderr: string }
let project: JsonReflection

let exampleCount: number
let exampleErrors: string[]

beforeAll(async () => {
  const building = BUILT_BY_SCRIPT
    ? Promise.resolve({ code: 0, stdout: '', stderr: '' })
    : new Promise<typeof build>((resolve) => {
        rmSync(HTML, { recursive: true, force: true })
        // `npm run docs` itself, so a change to the script (not only to typedoc.json) is built here too.
        execFile(
          'npm',
          ['run', '--silent', 'docs'],
          { cwd: ROOT, timeout: 170_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
        )
      })
  // While TypeDoc builds in its own process, type-check the examples here.
  const examples = examplesInSrc()
  exampleCount = examples.length
  exampleErrors = typeErrorsIn(examples)
  build = await building
  if (build.code === 0) project = JSON.parse(readFileSync(JSON_COPY, 'utf8')) as JsonReflection
}, 240_000)

/** The later checks read the built reference: without one, they say so instead of failing on a missing file. */
function requireBuild(): void {
  if (build.code !== 0) throw new Error('the reference did not build: see "builds with no warning and no error"')
}

function page(path: string): string {
  requireBuild()
  return readFileSync(join(HTML, path), 'utf8')
}

/** The page's text without tags, entities decoded (enough for the few entities TypeDoc writes). */
function textOf(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
}

/** Markdown with fenced code blocks blanked (a `# comment` in a shell block is no heading). */
function prose(markdown: string): string {
  let fenced = false
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
      return fenced || /^\s*(```|~~~)/.test(line) ? '' : line
    })
    .join('\n')
}

function moduleNamed(name: string): JsonReflection {
  requireBuild()
  const module = project.children?.find((child) => child.name === name)
  if (module === undefined) throw new Error(`no module "${name}" in the reference; modules: ${project.children?.map((c) => c.name).join(', ')}`)
  return module
}

/** `'promptloom SystemPrompt.assemble'` → the reflection, or `undefined`. */
function reflectionAt(path: string): JsonReflection | undefined {
  const [module, member] = path.split(' ') as [string, string]
  let at: JsonReflection | undefined = moduleNamed(module)
  for (const name of member.split('.')) at = at?.children?.find((child) => child.name === name)
  return at
}

function examplesOf(reflection: JsonReflection): string[] {
  const comments = [reflection.comment, ...(reflection.signatures ?? []).map((s) => s.comment)]
  return comments.flatMap((comment) =>
    (comment?.blockTags ?? []).filter((tag) => tag.tag === '@example').map((tag) => tag.content.map((part) => part.text).join('')),
  )
}

describe('npm run docs', () => {
  test('builds with no warning and no error', () => {
    expect(build.code, `${build.stdout}\n${build.stderr}`).toBe(0)
    expect(`${build.stdout}\n${build.stderr}`).not.toMatch(/\[(warning|error)\]/)
  })

  test('the landing page is the README up to the landing marker', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const html = page('index.html')
    // The first words of the README's first paragraph.
    const paragraph = readme.split('\n\n').find((block) => /^[A-Za-z*]/.test(block))!
    const firstWords = paragraph.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*`_]/g, '').split(/\s+/).slice(0, 8).join(' ')
    expect(textOf(html)).toContain(firstWords)
    const end = readme.indexOf(LANDING_END)
    if (end === -1) return // without the marker, the landing is the README's opening sections
    // The README's headings up to the marker are the landing page's; the first one after it is not.
    const headings = [...html.matchAll(/<h[1-6][^>]*>([\s\S]*?)<\/h[1-6]>/g)].map((m) => textOf(m[1]!).trim())
    const headingsOf = (markdown: string) => [...prose(markdown).matchAll(/^#{2,6} (.+)$/gm)].map((m) => m[1]!.replace(/`/g, '').trim())
    expect(headings).toEqual(expect.arrayContaining(headingsOf(readme.slice(0, end))))
    const after = headingsOf(readme.slice(end))[0]
    if (after !== undefined) expect(headings).not.toContain(after)
  })

  test('modules are named by their import specifiers', () => {
    requireBuild()
    expect(project.children!.map((module) => module.name).sort()).toEqual([...MODULES].sort())
    const modules = textOf(page('modules.html'))
    for (const name of MODULES) expect(modules).toContain(name)
  })

  test('every export is in a task group, and the groups come in task order', () => {
    requireBuild()
    const seen = new Set<string>()
    for (const module of project.children!) {
      const titles = module.groups!.map((group) => group.title)
      expect(titles.every((title) => TASK_GROUPS.includes(title)), `${module.name}: ${titles.join(', ')}`).toBe(true)
      expect([...titles].sort((a, b) => TASK_GROUPS.indexOf(a) - TASK_GROUPS.indexOf(b))).toEqual(titles)
      const grouped = new Set(module.groups!.flatMap((group) => group.children ?? []))
      const loose = (module.children ?? []).filter((child) => !grouped.has(child.id)).map((child) => child.name)
      expect(loose, `${module.name} exports in no group`).toEqual([])
      for (const title of titles) seen.add(title)
    }
    expect([...seen].sort()).toEqual([...TASK_GROUPS].sort())
    const root = textOf(page('modules/promptloom.html'))
    for (const title of TASK_GROUPS.filter((t) => moduleNamed('promptloom').groups!.some((g) => g.title === t))) expect(root).toContain(title)
    // The service leads; the storage building blocks come after it.
    expect(root.indexOf('SystemPrompt')).toBeLessThan(root.indexOf('AnonymousEntries'))
    expect(root.indexOf('SystemPrompt')).toBeLessThan(root.indexOf('SignalTable'))
  })

  test('the main entry points carry an @example, rendered on their pages', () => {
    const missing = EXAMPLED.filter((path) => {
      const reflection = reflectionAt(path)
      return reflection === undefined || examplesOf(reflection).length === 0
    })
    expect(missing, 'entry points without an @example').toEqual([])
    const systemPrompt = page('classes/promptloom.SystemPrompt.html')
    expect(systemPrompt).toMatch(/<h4[^>]*>.*Example/)
    expect(systemPrompt).toContain('<pre><code class="ts">')
  })

  test("SystemPrompt's page shows no member inherited from Cordis' Service", () => {
    const systemPrompt = reflectionAt('promptloom SystemPrompt')!
    expect(systemPrompt.children!.filter((member) => member.flags?.isInherited).map((member) => member.name)).toEqual([])
    // Member links read `<span>name</span></a>` (camelCase names broken by <wbr/>); anchors are lower case, so `Config` ≠ `config`.
    const html = page('classes/promptloom.SystemPrompt.html').replace(/<wbr\/>/g, '')
    expect(html).toContain('<span>assemble</span></a>')
    for (const name of CORDIS_MEMBERS) expect(html, name).not.toContain(`<span>${name}</span></a>`)
  })

  test('no documentation points into src/ (the package ships dist/, and the reference shows no sources)', () => {
    requireBuild()
    // A file's leading /** comment (say, a map of the source tree) documents its first export instead.
    const pointing: string[] = []
    const visit = (reflection: JsonReflection, path: string): void => {
      for (const comment of [reflection.comment, ...(reflection.signatures ?? []).map((s) => s.comment)]) {
        const parts = [...(comment?.summary ?? []), ...(comment?.blockTags ?? []).flatMap((tag) => tag.content)]
        if (/\bsrc\//.test(parts.map((part) => part.text).join(''))) pointing.push(path)
      }
      for (const child of reflection.children ?? []) visit(child, `${path}.${child.name}`)
    }
    for (const module of project.children!) visit(module, module.name)
    expect(pointing, 'docs that mention src/: a header comment above the first export should be /* … */, not /** … */').toEqual([])
  })

  test('every @example type-checks against the current API', () => {
    expect(exampleCount).toBeGreaterThanOrEqual(EXAMPLED.length)
    expect(exampleErrors).toEqual([])
  })
})

interface Example {
  /** `file:line` of the doc comment. */
  readonly where: string
  readonly code: string
}

/** The ```ts blocks of every `@example` in src's doc comments (what the reference renders). */
function examplesInSrc(): Example[] {
  const examples: Example[] = []
  for (const file of ts.sys.readDirectory(join(ROOT, 'src'), ['.ts'])) {
    const text = readFileSync(file, 'utf8')
    for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const body = comment[0]
        .slice(3, -2)
        .split('\n')
        .map((line) => line.replace(/^\s*\* ?/, ''))
        .join('\n')
      const line = text.slice(0, comment.index).split('\n').length
      for (const tag of body.split(/^(?=@\w)/m).filter((part) => part.startsWith('@example'))) {
        for (const fence of tag.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)) {
          examples.push({ where: `${relative(ROOT, file)}:${line}`, code: fence[1]! })
        }
      }
    }
  }
  return examples
}

/**
 * What an example may use without declaring it: a Cordis app with the
 * SystemPrompt service loaded, an agent's scope key, a step's assembly and the
 * agent loop's step surface. Global, so an example's own declarations shadow
 * them.
 */
const EXAMPLE_GLOBALS = `
declare const app: import('cordis').Context
declare const agent: { readonly name: string }
declare const assembly: import('promptloom').PromptAssembly
declare const surface: import('promptloom').StepSurface
`

/** Type-checks each example as its own module importing `promptloom`, `promptloom/node` and `promptloom/otel` from src. */
function typeErrorsIn(examples: readonly Example[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    noUnusedLocals: false,
    paths: {
      promptloom: [join(ROOT, 'src/index.ts')],
      'promptloom/node': [join(ROOT, 'src/node.ts')],
      'promptloom/otel': [join(ROOT, 'src/otel.ts')],
    },
  }
  const dir = join(ROOT, 'test/docs/__examples__')
  const files = new Map<string, string>([[join(dir, 'globals.d.ts'), EXAMPLE_GLOBALS]])
  const where = new Map<string, string>()
  examples.forEach((example, i) => {
    const file = join(dir, `example-${i}.ts`)
    files.set(file, `${example.code}\nexport {}\n`)
    where.set(file, example.where)
  })
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, language, onError, create) => {
    const text = files.get(name)
    return text === undefined ? getSourceFile(name, language, onError, create) : ts.createSourceFile(name, text, language, true)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => files.has(name) || fileExists(name)
  const readFile = host.readFile.bind(host)
  host.readFile = (name) => files.get(name) ?? readFile(name)
  const program = ts.createProgram([...files.keys()], options, host)
  const errors: string[] = []
  for (const [file, label] of where) {
    const source = program.getSourceFile(file)!
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line
      errors.push(`${label}, example line ${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`)
    }
  }
  return errors
}
