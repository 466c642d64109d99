/**
 * Post-build step (`npm run build`): copies cordis' declaration files into
 * `dist/vendor/cordis/` with every relative specifier given its `.js`
 * extension, so a NodeNext consumer can point `cordis` at them with one
 * `paths` entry (docs/install.md). cordis 4.0.0-rc.10 ships `.d.ts` files
 * that re-export `./context`, `./events`, … without extensions, which
 * `moduleResolution: NodeNext` cannot resolve: under it `import { Context }
 * from 'cordis'` finds no exports at all. Only types are copied; at run time
 * the consumer's own cordis is used. Fails when the installed cordis is not
 * the pinned peer version, or when a specifier is left that NodeNext cannot
 * resolve.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A relative specifier after `from`, `import(` or `declare module`: lead, quote, specifier. */
const RELATIVE = /((?:from|import\(|declare module)\s*)(['"])(\.{1,2}(?:\/[^'"]*)?)\2/g

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(ROOT, 'dist', 'vendor', 'cordis')

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
const cordisDir = dirname(createRequire(join(ROOT, 'package.json')).resolve('cordis/package.json'))
const cordis = JSON.parse(readFileSync(join(cordisDir, 'package.json'), 'utf8')) as { version: string; license: string }
if (cordis.version !== manifest.peerDependencies.cordis) {
  throw new Error(
    `installed cordis is ${cordis.version} but the peer dependency pins "${manifest.peerDependencies.cordis}"; run npm ci so the vendored declarations match the peer`,
  )
}

/** `'./context'` → `'./context.js'`, `'.'` → `'./index.js'`, in imports, exports, `import()` types and `declare module`, either quote. */
function withExtensions(source: string): string {
  return source.replace(RELATIVE, (_match, lead: string, quote: string, specifier: string) => {
    if (specifier.endsWith('.js')) return `${lead}${quote}${specifier}${quote}`
    if (specifier === '.' || specifier === '..' || specifier.endsWith('/')) return `${lead}${quote}${specifier.replace(/\/?$/, '/')}index.js${quote}`
    return `${lead}${quote}${specifier}.js${quote}`
  })
}


const lib = join(cordisDir, 'lib')
const files = readdirSync(lib).filter((name) => name.endsWith('.d.ts'))
if (!files.includes('index.d.ts')) throw new Error(`cordis ${cordis.version} has no lib/index.d.ts; the vendored declarations need updating`)
mkdirSync(OUT, { recursive: true })
const header = `// Vendored from cordis ${cordis.version} (${cordis.license} license, https://github.com/cordiverse/cordis) by promptloom's build, with .js extensions added for moduleResolution NodeNext.\n`
for (const name of files) {
  const text = withExtensions(readFileSync(join(lib, name), 'utf8'))
  for (const [, , , specifier] of text.matchAll(RELATIVE)) {
    if (!specifier!.endsWith('.js')) throw new Error(`cordis lib/${name}: specifier "${specifier}" still has no extension after rewriting`)
  }
  writeFileSync(join(OUT, name), header + text)
}
