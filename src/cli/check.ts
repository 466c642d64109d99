import { breakText } from './break-text.js'
import type { AgentLog } from './agent-log.js'
import { agentModel, percent } from './report-model.js'
import { terminalSafe } from './terminal.js'

/**
 * `promptloom check`: a CI gate over session logs (SPEC §6). A log passes
 * when its mean reusable share over the steps after the first (of each
 * session) is at least `minReusable` and it has at most `maxBreaks` steps
 * with a `cacheBreak`. Prints one line per log and, under a failing one, each
 * break (step, cause, section, layer, variable); every string from a log or a
 * path goes through `terminalSafe`.
 *
 *   promptloom check: 2 logs, min reusable 90.0%, max breaks 3
 *   ok    logs/a.jsonl: reusable 97.2% over 19 steps, 1 cache break
 *   FAIL  logs/b.jsonl: reusable 41.0% over 4 steps (below 90.0%), 4 cache breaks (over 3)
 *           step 2: section "env" (layer global) variable "branch"
 */

/** The thresholds of `check`. */
export interface CheckThresholds {
  /** The least mean reusable share a log may have, in [0, 1]. */
  readonly minReusable: number
  /** The most cache breaks a log may have; `undefined` for no limit. */
  readonly maxBreaks: number | undefined
}

/** The default `--min-reusable`. */
export const DEFAULT_MIN_REUSABLE = 0.9

/** What `check` found in one log. */
export interface CheckedLog {
  readonly file: string
  /** Mean reusable share over the steps after the first; `undefined` when the log has none. */
  readonly meanReusable: number | undefined
  readonly steps: number
  readonly breaks: readonly { readonly step: number; readonly session: number; readonly text: string }[]
  readonly passed: boolean
}

/** Checks one log against the thresholds. */
export function checkLog(log: AgentLog, thresholds: CheckThresholds): CheckedLog {
  const model = agentModel(log)
  const later = model.rows.filter((row) => !row.first)
  const meanReusable = later.length === 0 ? undefined : model.meanReusableShare
  const breaks = model.rows.filter((row) => row.cacheBreak !== undefined).map((row) => ({ step: row.step, session: row.session, text: breakText(row.cacheBreak!) }))
  const passed =
    (meanReusable === undefined || meanReusable >= thresholds.minReusable) && (thresholds.maxBreaks === undefined || breaks.length <= thresholds.maxBreaks)
  return { file: log.file, meanReusable, steps: later.length, breaks, passed }
}

/** The report `check` prints for `results`, ending in a line break. */
export function renderCheck(results: readonly CheckedLog[], thresholds: CheckThresholds): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`
  const lines = [
    `promptloom check: ${plural(results.length, 'log')}, min reusable ${percent(thresholds.minReusable)}, max breaks ${thresholds.maxBreaks ?? 'unlimited'}`,
  ]
  for (const result of results) {
    const reusable =
      result.meanReusable === undefined
        ? 'no step after the first'
        : `reusable ${percent(result.meanReusable)} over ${plural(result.steps, 'step')}${result.meanReusable < thresholds.minReusable ? ` (below ${percent(thresholds.minReusable)})` : ''}`
    const over = thresholds.maxBreaks !== undefined && result.breaks.length > thresholds.maxBreaks ? ` (over ${thresholds.maxBreaks})` : ''
    lines.push(`${result.passed ? 'ok  ' : 'FAIL'}  ${terminalSafe(result.file)}: ${reusable}, ${plural(result.breaks.length, 'cache break')}${over}`)
    if (result.passed) continue
    const sessions = new Set(result.breaks.map((item) => item.session)).size > 1
    for (const item of result.breaks) {
      lines.push(`        ${sessions ? `session ${item.session} ` : ''}step ${item.step}: ${terminalSafe(item.text)}`)
    }
  }
  const failed = results.filter((result) => !result.passed).length
  lines.push(failed === 0 ? `passed: ${plural(results.length, 'log')}` : `failed: ${failed} of ${plural(results.length, 'log')}`)
  return lines.join('\n') + '\n'
}
