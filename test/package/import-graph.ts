import { existsSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, relative, resolve } from 'node:path'
import ts from 'typescript'

/** What `walkImportGraph` found from one entry file. */
export interface ImportGraph {
  /** Every file reached, relative to the walk's base directory, sorted. */
  readonly files: string[]
  /** Bare specifiers that are not Node built-ins (other packages), sorted. */
  readonly external: string[]
  /** One line per Node built-in import, Node-global reference or unresolved relative import. */
  readonly violations: string[]
}

const BUILTINS = new Set(builtinModules)
/** Node globals a browser or edge runtime does not have. */
const NODE_GLOBALS = new Set(['Buffer', 'process', 'global', 'require', 'module', '__dirname', '__filename', 'setImmediate'])

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0]!)
}

/** `./x.js` from a `.d.ts` file is `./x.d.ts`; from a `.js` file, itself. */
function resolveRelative(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier)
  return from.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target
}

/** An identifier that names a property (`x.process`, `{ process: 1 }`), not a reference to a global. */
function isPropertyName(node: ts.Identifier): boolean {
  const parent = node.parent
  if (ts.isPropertyAccessExpression(parent)) return parent.name === node
  if (ts.isQualifiedName(parent)) return parent.right === node
  return (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isGetAccessor(parent) ||
      ts.isSetAccessor(parent)) &&
    parent.name === node
  )
}

/**
 * References to Node globals, found with TypeScript's checker over the walked
 * files alone (ES2023 lib, no Node types): an identifier from NODE_GLOBALS
 * that no walked file declares (a local variable named `global` is fine) is a
 * use of the Node global.
 */
function globalReferences(files: readonly string[], base: string): string[] {
  const program = ts.createProgram(files, { allowJs: true, noEmit: true, noResolve: true, types: [], lib: ['lib.es2023.d.ts'] })
  const checker = program.getTypeChecker()
  const ours = new Set(files)
  const found: string[] = []
  for (const file of files) {
    const source = program.getSourceFile(file)!
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && !isPropertyName(node)) {
        const declarations = checker.getSymbolAtLocation(node)?.declarations ?? []
        if (!declarations.some((declaration) => ours.has(declaration.getSourceFile().fileName))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart())
          found.push(`${relative(base, file)}:${line + 1} references the Node global ${node.text}`)
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return found
}

/**
 * Walks the static and dynamic imports (and, in `.d.ts` files, the
 * `/// <reference types>` directives) reachable from `entry`, following
 * relative specifiers and recording bare ones; then looks for Node globals.
 * TypeScript reads the files, so comments and strings are not mistaken for
 * imports or globals.
 */
export function walkImportGraph(entry: string, base = dirname(entry)): ImportGraph {
  const seen = new Set<string>()
  const external = new Set<string>()
  const violations: string[] = []
  const queue = [resolve(entry)]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const name = relative(base, file)
    const text = readFileSync(file, 'utf8')
    const info = ts.preProcessFile(text, true, true)
    for (const { fileName: types } of info.typeReferenceDirectives) {
      if (types === 'node') violations.push(`${name} references Node's types (/// <reference types="node" />)`)
    }
    for (const { fileName: specifier } of info.importedFiles) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier)
        if (existsSync(target)) queue.push(target)
        else violations.push(`${name} imports "${specifier}", which does not exist`)
      } else if (isBuiltin(specifier)) violations.push(`${name} imports the Node built-in "${specifier}"`)
      else external.add(specifier)
    }
  }
  violations.push(...globalReferences([...seen], base))
  return { files: [...seen].map((file) => relative(base, file)).sort(), external: [...external].sort(), violations }
}
