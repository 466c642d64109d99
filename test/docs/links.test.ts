import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

// The README and docs/*.md link to files of the repository and to headings:
// each relative link must name a file or folder that exists, and each
// `#anchor` a heading of the page it points into (GitHub's anchors).

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

/** Markdown outside fenced code blocks, with inline code spans blanked. */
function prose(markdown: string): string {
  let fenced = false
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced
        return ''
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length))
    })
    .join('\n')
}

/** The link targets of a page: inline `[text](target)`, images and reference definitions. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown)
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!)
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!)
  const html = [...text.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)].map((m) => m[1]!)
  return [...inline, ...references, ...html]
}

/** GitHub's heading anchors of a page: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!)
  return anchors
}

describe('relative links in the README and docs/', () => {
  test.each(PAGES)('%s', (page) => {
    const markdown = readFileSync(join(ROOT, page), 'utf8')
    const broken: string[] = []
    for (const link of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue // https:, mailto:, …
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? join(ROOT, page) : join(dirname(join(ROOT, page)), decodeURIComponent(path))
      if (!existsSync(target)) {
        broken.push(`${link}: no ${relative(ROOT, target)}`)
        continue
      }
      if (anchor === undefined || anchor === '' || !target.endsWith('.md') || statSync(target).isDirectory()) continue
      if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no heading "#${anchor}" in ${relative(ROOT, target)}`)
    }
    expect(broken).toEqual([])
  })
})
