import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/**
 * Launches Debian's Chromium (`/usr/bin/chromium`) through playwright-core,
 * for the report's browser test and `npm run screenshot`. playwright-core
 * never downloads a browser; a missing Chromium is an error that says how to
 * install it.
 */

/** The browser the report is tested in. */
export const CHROMIUM = '/usr/bin/chromium'

/** Set by `.ci/run` only where apt-get cannot install Chromium; the browser test then skips. */
export const SKIP_BROWSER_ENV = 'PROMPTLOOM_SKIP_BROWSER'

/** The flags Chromium runs with: headless, no sandbox (root in CI), and no background network traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
]

/** Launches headless Chromium; throws naming the install command when `executable` (default `/usr/bin/chromium`) is missing. */
export async function launchChromium(executable = CHROMIUM): Promise<Browser> {
  if (!existsSync(executable)) {
    throw new Error(
      `Chromium is not installed at "${executable}"; the report's browser test needs it: run "apt-get update && apt-get install -y chromium" (or set ${SKIP_BROWSER_ENV}=1 where no browser can be installed)`,
    )
  }
  return chromium.launch({ executablePath: executable, headless: true, args: CHROMIUM_ARGS })
}
