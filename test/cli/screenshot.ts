/**
 * `npm run screenshot`: runs the demo (3 agents, 20 steps) into a temporary
 * folder, renders the report of its logs, opens it in headless
 * Chromium and writes docs/report.png: the top of the page, through agent-1's
 * step 11 (a section that changed because a variable did, with its diff).
 *
 *   npm run screenshot -- [--out docs/report.png] [--width 1400]
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { writeReport } from '../../src/cli/run.js'
import { launchChromium } from './browser.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const { values } = parseArgs({ options: { out: { type: 'string' }, width: { type: 'string' } }, strict: true })
const out = resolve(values.out ?? join(ROOT, 'docs', 'report.png'))
const width = Number(values.width ?? 1400)

const tmp = mkdtempSync(join(tmpdir(), 'promptloom-screenshot-'))
try {
  execFileSync(process.execPath, ['--import', 'tsx', join('examples', 'agent-harness.ts'), '--log', join(tmp, 'session.jsonl')], { cwd: ROOT, stdio: 'ignore' })
  // The report names the logs as given: relative names read better in the picture than a temp path.
  process.chdir(tmp)
  const report = writeReport(['agent-1', 'agent-2', 'agent-3'].map((agent) => `session.${agent}.jsonl`), 'report.html')
  const browser = await launchChromium()
  try {
    const page = await browser.newPage({ viewport: { width, height: 2500 }, deviceScaleFactor: 1 })
    await page.goto(pathToFileURL(report).href)
    mkdirSync(dirname(out), { recursive: true })
    await page.screenshot({ path: out, fullPage: false })
  } finally {
    await browser.close()
  }
  console.log(`screenshot written: ${out}`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
