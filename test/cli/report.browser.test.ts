import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { launchChromium, SKIP_BROWSER_ENV } from './browser.js'
import { jsonl, messageLine, stepLine, usageLine } from './fixtures.js'

// The report in a real browser: the demo's logs (3 agents, 20 steps) go
// through the CLI script, and the page is opened in Debian's headless
// Chromium. The temp folder is kept so the screenshot can be looked at.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const AGENTS = ['agent-1', 'agent-2', 'agent-3']
const STEPS = 20
const skip = process.env[SKIP_BROWSER_ENV] === '1'
if (skip) console.warn(`report.browser.test: skipped because ${SKIP_BROWSER_ENV}=1 (no Chromium could be installed here)`)

function node(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${args.join(' ')} failed: ${stderr || error.message}`)),
    )
  })
}

interface Opened {
  readonly page: Page
  readonly problems: string[]
  readonly requests: string[]
}

test('a missing Chromium fails with the command that installs it (never a silent skip)', async () => {
  await expect(launchChromium('/nonexistent/chromium')).rejects.toThrow(
    'Chromium is not installed at "/nonexistent/chromium"; the report\'s browser test needs it: run "apt-get update && apt-get install -y chromium"',
  )
})

describe.skipIf(skip)('the HTML report in headless Chromium', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'promptloom-report-browser-'))
  const report = join(tmp, 'cli-report.html')
  let browser: Browser

  beforeAll(async () => {
    await node([join('examples', 'agent-harness.ts'), '--log', join(tmp, 'session.jsonl')])
    const logs = AGENTS.map((agent) => join(tmp, `session.${agent}.jsonl`))
    await node([join('src', 'cli', 'main.ts'), 'report', ...logs, '-o', report])
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    console.log(`report.browser.test: report and screenshot in ${tmp}`)
  })

  async function open(path: string): Promise<Opened> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const problems: string[] = []
    const requests: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(pathToFileURL(path).href, { waitUntil: 'load' })
    return { page, problems, requests }
  }

  test('opens without console errors, page errors or any request besides the file itself', async () => {
    const { page, problems, requests } = await open(report)
    expect(await page.title()).toBe(`promptloom report · ${AGENTS.join(', ')}`)
    expect(problems).toEqual([])
    expect(requests).toEqual([pathToFileURL(report).href])
    await page.close()
  })

  test('draws each agent\'s chart: a visible SVG with one plotted point per step and a line through them', async () => {
    const { page } = await open(report)
    for (const agent of AGENTS) {
      const chart = page.locator(`article.card[data-agent="${agent}"] svg.chart`)
      const box = await chart.boundingBox()
      expect(box!.width).toBeGreaterThan(300)
      expect(box!.height).toBeGreaterThan(100)
      expect(await chart.locator('circle.point.stable').count()).toBe(STEPS)
      const length = await chart.locator('path.line.stable').evaluate((path) => (path as unknown as { getTotalLength(): number }).getTotalLength())
      expect(length).toBeGreaterThan(100)
      // Points sit inside the plot: none at NaN or off the canvas.
      const ys = await chart.locator('circle.point.stable').evaluateAll((points) => points.map((p) => Number(p.getAttribute('cy'))))
      expect(ys.every((y) => y >= 0 && y <= 220)).toBe(true)
    }
    await page.close()
  })

  test('has one table row per step per agent, and step 8 shows plan:policy removed', async () => {
    const { page } = await open(report)
    for (const agent of AGENTS) {
      const table = page.locator(`section.agent[data-agent="${agent}"] table.steps`)
      expect(await table.locator('tbody tr.step-row').count()).toBe(STEPS)
      expect(await table.locator('tr.step-row[data-step="8"] td:nth-child(6) .chip.removed').textContent()).toBe('−plan:policy')
    }
    await page.close()
  })

  test('a step that lost reuse shows its cause in its row and the section diff under it', async () => {
    const { page } = await open(report)
    const table = page.locator('section.agent[data-agent="agent-1"] table.steps')
    const why = table.locator('tr.step-row[data-step="11"] td.why-cell')
    expect(await why.innerText()).toMatch(/^section\s*deployment:persona-suffix\s*layer\s*global\s*variable\s*branch$/i)
    const detail = table.locator('tr.why-row[data-step="11"]')
    expect(await detail.isVisible()).toBe(true)
    expect(await detail.locator('.why-line').innerText()).toContain('its template is unchanged; the value of variable branch changed')
    expect(await detail.locator('.why-line').innerText()).toMatch(/expected \d+ cached tokens · observed \d+ of \d+ input tokens cached/)
    expect(await detail.locator('pre.diff .line.removed mark').innerText()).toBe('main')
    expect(await detail.locator('pre.diff .line.added mark').innerText()).toBe('feature/login')
    // A tools break names the tool, with no diff.
    const tools = table.locator('tr.step-row[data-step="4"] td.why-cell')
    expect(await tools.innerText()).toMatch(/^tools\s*\+browse$/)
    expect(await table.locator('tr.why-row[data-step="4"] pre.diff').count()).toBe(0)
    await page.close()
  })

  test('runs of unchanged steps are folded into one row, and its checkbox expands them', async () => {
    const { page } = await open(report)
    const run = page.locator('section.agent[data-agent="agent-1"] tbody.run[data-steps="5-7"]')
    expect(await run.locator('tr.run-toggle').innerText()).toContain('3 unchanged steps (5–7)')
    const rows = run.locator('tr.step-row')
    expect(await rows.count()).toBe(3)
    expect(await Promise.all([0, 1, 2].map((i) => rows.nth(i).isVisible()))).toEqual([false, false, false])
    await run.locator('tr.run-toggle label').click()
    expect(await Promise.all([0, 1, 2].map((i) => rows.nth(i).isVisible()))).toEqual([true, true, true])
    await run.locator('tr.run-toggle label').click()
    expect(await rows.first().isVisible()).toBe(false)
    await page.close()
  })

  test('every step has an anchor that resolves, also inside a folded run', async () => {
    const { page } = await open(report)
    const anchors = await page.locator('a.anchor').evaluateAll((links) => links.map((link) => link.getAttribute('href')!))
    expect(anchors).toHaveLength(STEPS * AGENTS.length)
    const missing = await page.evaluate((hrefs: string[]) => {
      const doc = (globalThis as unknown as { document: { getElementById(id: string): unknown } }).document
      return hrefs.filter((href) => doc.getElementById(href.slice(1)) === null)
    }, anchors)
    expect(missing).toEqual([])
    await page.goto(`${pathToFileURL(report).href}#agent-2-step-6`)
    const row = page.locator('#agent-2-step-6')
    expect(await row.isVisible()).toBe(true)
    expect(await row.evaluate((element) => element.matches(':target'))).toBe(true)
    const box = await row.boundingBox()
    // Below the sticky table header, inside the viewport.
    expect(box!.y).toBeGreaterThanOrEqual(20)
    expect(box!.y).toBeLessThan(1000)
    // Its run opens around it; other runs stay folded.
    expect(await page.locator('#agent-2-step-5').isVisible()).toBe(true)
    expect(await page.locator('#agent-2-step-2').isVisible()).toBe(false)
    await page.close()
  })

  test('the prefix tree shows a node two of the three agents share, with tokens, and the sections that split the prefix', async () => {
    const { page } = await open(report)
    const node = page.locator('ul.tree li.node[data-agents="agent-1 agent-3"]')
    expect(await node.count()).toBe(1)
    expect(await node.isVisible()).toBe(true)
    const head = await node.locator(':scope > .node-head').innerText()
    expect(head).toMatch(/^agent-1\s*agent-3\s*\d+ chars · \d+ tok/)
    expect(await node.locator(':scope > .node-parts').innerText()).toBe('deployment:persona-prefix')
    expect(await page.locator('ul.tree > li.node').getAttribute('data-agents')).toBe('agent-1 agent-2 agent-3')
    const split = page.locator('li.split[data-agent="agent-2"][data-section="deployment:persona-prefix"]')
    expect(await split.innerText()).toMatch(/it costs \d+ tokens it could otherwise share with agent-1, agent-3$/)
    await page.close()
  })

  test('writes a full-page screenshot PNG into the test folder', async () => {
    const { page } = await open(report)
    const png = join(tmp, 'report.png')
    await page.screenshot({ path: png, fullPage: true })
    const bytes = readFileSync(png)
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG')
    expect(bytes.readUInt32BE(16)).toBe(1400)
    expect(bytes.length).toBeGreaterThan(20_000)
    await page.close()
  })

  test('plots observed cache reuse as its own series when usage was recorded', async () => {
    const log = join(tmp, 'usage.jsonl')
    writeFileSync(
      log,
      jsonl(stepLine(1), messageLine('You are Loom.', 'append'), usageLine(1, 100, 0), stepLine(2, { stablePrefixLength: 13 }), usageLine(2, 100, 90, { predictedTokens: 95 })),
    )
    const page2 = join(tmp, 'usage.html')
    await node([join('src', 'cli', 'main.ts'), 'report', log, '-o', page2])
    expect(existsSync(page2)).toBe(true)
    const { page, problems } = await open(page2)
    expect(problems).toEqual([])
    expect(await page.locator('svg.chart rect.point.observed').count()).toBe(2)
    expect(await page.locator('tr.step-row[data-step="2"]').textContent()).toContain('predicted 95 (-5)')
    await page.close()
  })
})
