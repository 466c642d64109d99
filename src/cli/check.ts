import type { AgentLog } from './agent-log.js'
import { breakText } from './inspect.js'
import { agentModel, percent, plural } from './report-model.js'
import { terminalSafe } from './terminal.js'

/**
 * `promptloom check`: a CI gate over session logs (SPEC §6). A log passes when its
 * mean reusable share over the steps after the first (of each session) is at
 * least `minReusable` and at most `maxBreaks` of its steps have a `cacheBreak`.
 *
 *   promptloom check: 2 logs, min reusable 90.0%, max breaks 3
 *   ok    logs/a.jsonl: reusable 97.2% over 19 steps, 1 cache break
 *   FAIL  logs/b.jsonl: reusable 41.0% over 4 steps (below 90.0%), 4 cache breaks (over 3)
 *           step 2: section "env" (layer global) variable "branch"
 */

/** The thresholds of `check`: `minReusable` in [0, 1]; `maxBreaks` `undefined` for no limit. */
export interface CheckThresholds {
  readonly minReusable: number
  readonly maxBreaks: number | undefined
}

/** The default `--min-reusable`. */
export const DEFAULT_MIN_REUSABLE = 0.9

/** What `check` found in one log; `meanReusable` is `undefined` when it has no step after the first. */
export interface CheckedLog {
  readonly file: string
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
  const breaks = model.rows.flatMap((row) => (row.cacheBreak === undefined ? [] : [{ step: row.step, session: row.session, text: breakText(row.cacheBreak) }]))
  const passed =
    (meanReusable === undefined || meanReusable >= thresholds.minReusable) && (thresholds.maxBreaks === undefined || breaks.length <= thresholds.maxBreaks)
  return { file: log.file, meanReusable, steps: later.length, breaks, passed }
}

/** The report `check` prints for `results`, ending in a line break; every string from a log or a path goes through `terminalSafe`. */
export function renderCheck(results: readonly CheckedLog[], thresholds: CheckThresholds): string {
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
    for (const item of result.breaks) lines.push(`        ${sessions ? `session ${item.session} ` : ''}step ${item.step}: ${terminalSafe(item.text)}`)
  }
  const failed = results.filter((result) => !result.passed).length
  lines.push(failed === 0 ? `passed: ${plural(results.length, 'log')}` : `failed: ${failed} of ${plural(results.length, 'log')}`)
  return lines.join('\n') + '\n'
}
