import ts from 'typescript'

// How README.md's ```ts blocks are checked against the packed package (install.test.ts):
//
// - Every block fenced ```ts (or ```typescript) is type-checked in a consumer project that installed
//   the packed tarball, under module/moduleResolution NodeNext and under ESNext/Bundler. A block that
//   is not TypeScript (a shape sketch) belongs in a ```text fence; a signature listing type-checks when
//   written as declarations (`declare function section(entry: PromptSection): RegistrationDisposer`).
// - A whole program is marked by the line `<!-- run -->` right before its fence (blank lines allowed
//   between). It is compiled exactly as written, with no preamble, and then run with node (exit 0, empty
//   stderr) with ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY and OPENAI_BASE_URL/OPENAI_API_KEY pointing at a
//   fresh provider simulator on 127.0.0.1, so a program that calls a model runs without a network.
// - Any other block is a fragment. It is compiled as a module after a preamble that declares each of
//   these variables the block does not declare or import itself (`declare let`, so a fragment may
//   assign them):
//     app, ctx            a Cordis Context (app: with the SystemPrompt plugin loaded; ctx: a plugin's)
//     systemPrompt        the SystemPrompt service (app.systemPrompt)
//     agent               a scope key, { readonly name: string }
//     scope               a Scope (createScope's result)
//     assembly            a PromptAssembly
//     surface, result     a StepSurface and one of its StepResults
//     rendered            a RenderedPrompt;  system: RenderedPrompt | undefined
//     MODEL               a model id (string), as the loop examples name it
//     client              the provider's SDK client, and messages, history: its message list, for the
//                         provider of the request builder the block calls: toOpenAIChat → openai Chat
//                         Completions, toOpenAIResponses → openai Responses input items, toAISDK → ai's
//                         ModelMessage (and model: a LanguageModel, no client), otherwise @anthropic-ai/sdk
//   and then imports, by name, every export of promptloom, promptloom/node and promptloom/otel the
//   block does not bind itself.
// - Blocks may import from promptloom, promptloom/node, promptloom/otel, cordis, @preact/signals-core,
//   @anthropic-ai/sdk, openai, ai, @ai-sdk/anthropic, gpt-tokenizer, @opentelemetry/api and node:
//   built-ins; relative imports (../src/…) do not resolve in a user's project and fail the check.

/** One ```ts block of a Markdown file. */
export interface ReadmeBlock {
  /** 1-based position among the file's ts blocks. */
  readonly index: number
  /** 1-based line of the block's first code line in the Markdown file. */
  readonly line: number
  readonly code: string
  /** Marked `<!-- run -->`: a whole program, compiled as written and run. */
  readonly run: boolean
}

/** The names the fragment preamble offers, with where each comes from. */
export interface PreambleSources {
  /** Module specifier → the names it exports. */
  readonly [specifier: string]: readonly string[]
}

export const RUN_MARKER = '<!-- run -->'

const ANTHROPIC = "import('@anthropic-ai/sdk').default"
const OPENAI = "import('openai').default"

/** The preamble's variables for a fragment, name → type, typed for the provider whose request builder it calls. */
export function preambleVariables(code: string): Record<string, string> {
  const provider: Record<string, string> = /\btoOpenAIChat\b/.test(code)
    ? { client: OPENAI, messages: `${OPENAI}.Chat.ChatCompletionMessageParam[]`, history: `${OPENAI}.Chat.ChatCompletionMessageParam[]` }
    : /\btoOpenAIResponses\b/.test(code)
      ? { client: OPENAI, messages: `${OPENAI}.Responses.ResponseInputItem[]`, history: `${OPENAI}.Responses.ResponseInputItem[]` }
      : /\btoAISDK\b/.test(code)
        ? { model: "import('ai').LanguageModel", messages: "import('ai').ModelMessage[]", history: "import('ai').ModelMessage[]" }
        : { client: ANTHROPIC, messages: `${ANTHROPIC}.MessageParam[]`, history: `${ANTHROPIC}.MessageParam[]` }
  return {
    app: "import('cordis').Context",
    ctx: "import('cordis').Context",
    systemPrompt: "import('promptloom').SystemPrompt",
    agent: '{ readonly name: string }',
    scope: "import('promptloom').Scope",
    assembly: "import('promptloom').PromptAssembly",
    surface: "import('promptloom').StepSurface",
    result: "import('promptloom').StepResult",
    rendered: "import('promptloom').RenderedPrompt",
    system: "import('promptloom').RenderedPrompt | undefined",
    MODEL: 'string',
    ...provider,
  }
}

/** The ```ts blocks of a Markdown text, in order; an unclosed fence is an error naming its line. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n')
  const blocks: ReadmeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(`{3,}|~{3,})\s*(\S*)/.exec(lines[i]!)
    if (fence === null) continue
    const close = lines.findIndex((line, j) => j > i && line.trimEnd() === fence[1])
    if (close === -1) throw new Error(`README.md:${i + 1}: the ${fence[1]} fence opened here is never closed`)
    if (fence[2] === 'ts' || fence[2] === 'typescript') {
      let before = i - 1
      while (before >= 0 && lines[before]!.trim() === '') before--
      blocks.push({ index: blocks.length + 1, line: i + 2, code: lines.slice(i + 1, close).join('\n') + '\n', run: before >= 0 && lines[before]!.trim() === RUN_MARKER })
    }
    i = close
  }
  return blocks
}

/** The names a block binds at its top level: imports, variables (destructured too), functions, classes, types. */
export function topLevelNames(code: string): Set<string> {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const names = new Set<string>()
  const bind = (name: ts.BindingName): void => {
    if (ts.isIdentifier(name)) names.add(name.text)
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name)
  }
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) || ts.isImportEqualsDeclaration(statement)) {
      if (ts.isImportEqualsDeclaration(statement)) names.add(statement.name.text)
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined
      if (clause?.name !== undefined) names.add(clause.name.text)
      const bindings = clause?.namedBindings
      if (bindings !== undefined && ts.isNamespaceImport(bindings)) names.add(bindings.name.text)
      if (bindings !== undefined && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text)
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) bind(declaration.name)
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement) ||
        ts.isModuleDeclaration(statement)) &&
      statement.name !== undefined &&
      ts.isIdentifier(statement.name)
    ) {
      names.add(statement.name.text)
    }
  }
  return names
}

/**
 * The file a block is checked as: a run block as written; a fragment after one line of variable
 * declarations and one import line per source (each line present, possibly empty, so a fragment's
 * line N is the file's line N + preambleLines).
 */
export function blockModule(block: ReadmeBlock, sources: PreambleSources): string {
  if (block.run) return block.code
  const taken = topLevelNames(block.code)
  const variables = Object.entries(preambleVariables(block.code)).filter(([name]) => !taken.has(name))
  for (const [name] of variables) taken.add(name)
  const declarations = variables.length === 0 ? '' : `declare let ${variables.map(([name, type]) => `${name}: ${type}`).join(', ')}`
  const imports = Object.entries(sources).map(([specifier, names]) => {
    const wanted = names.filter((name) => name !== 'default' && !taken.has(name))
    for (const name of wanted) taken.add(name)
    return wanted.length === 0 ? '' : `import { ${wanted.join(', ')} } from '${specifier}'`
  })
  return `${[declarations, ...imports].join('\n')}\n${block.code}export {}\n`
}

/** How many lines blockModule puts before a block's code. */
export function preambleLines(block: ReadmeBlock, sources: PreambleSources): number {
  return block.run ? 0 : 1 + Object.keys(sources).length
}
