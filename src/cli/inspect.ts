import type { SessionLogCacheBreak } from '../surface/session-log.js'
import { agentModel, percent, plural, type AgentModel, type StepRow } from './report-model.js'
import type { AgentLog } from './run.js'

// C0 and C1 controls (U+009B is a one-character CSI), DEL, line and paragraph separators, and the bidi overrides.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * `text` with every control character shown as an escape (`\x1b`, `\u009b`, `\u202e`), so the terminal obeys none:
 * log text could otherwise move the cursor, set the window title or, with OSC 52, write the clipboard.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/** `promptloom inspect`: one agent's steps as a text table, each row's warnings indented under it; log text `terminalSafe`. */
export function renderInspectTable(agent: AgentModel): string {
  const rows = agent.rows
  type Column = { title: string; left?: true; empty?: string; cell: (row: StepRow) => string }
  // An optional column (one with an `empty` cell) shows only when some row's cell differs from it.
  const all: Column[] = [
    { title: 'step', cell: (row) => `${row.step}${row.compacted ? '*' : ''}` },
    { title: 'prompt', cell: (row) => String(row.promptLength) },
    { title: 'stable', cell: (row) => (row.first ? 'first' : percent(row.stableShare)) },
    { title: 'reusable', cell: (row) => percent(row.reusableShare) },
    {
      title: 'tokens',
      empty: '-',
      cell: (row) => (row.promptTokens === undefined ? '-' : `${row.stablePrefixTokens ?? '?'}/${row.promptTokens}`),
    },
    {
      title: 'cached/input (pred)',
      empty: '-',
      cell: ({ usage: u }) =>
        u === undefined
          ? '-'
          : `${u.cachedInputTokens}/${u.inputTokens}${u.predictedTokens === undefined ? '' : ` (${u.predictedTokens})`}`,
    },
    { title: 'withheld', empty: '0', cell: (row) => `${row.withheld.length}${row.overBudget ? ' over' : ''}` },
    { title: 'lost at', left: true, empty: '-', cell: (row) => (row.cacheBreak === undefined ? '-' : breakText(row.cacheBreak)) },
    { title: 'changes', left: true, cell: changesOf },
  ]
  const columns = all.filter((column) => column.empty === undefined || rows.some((row) => column.cell(row) !== column.empty))

  const cells = rows.map((row) => columns.map((column) => terminalSafe(column.cell(row))))
  const widths = columns.map((column, i) => cells.reduce((width, line) => Math.max(width, line[i]!.length), column.title.length))
  const format = (values: readonly string[]): string =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value[columns[i]!.left ? 'padEnd' : 'padStart'](widths[i]!)))
      .join('  ')
      .trimEnd()

  const mean = agent.meanStableShare === undefined ? '-' : percent(agent.meanStableShare)
  const summary = `${plural(rows.length, 'step')}, mean stable prefix ${mean}, ${plural(agent.warningCount, 'warning')}`
  const out = [`${terminalSafe(agent.name)} (${terminalSafe(agent.file)}): ${summary}`, format(columns.map((column) => column.title))]
  rows.forEach((row, i) => {
    out.push(format(cells[i]!))
    for (const warning of row.warnings) out.push(`${' '.repeat(widths[0]! + 2)}! ${terminalSafe(warning.message)}`)
  })
  if (rows.some((row) => row.compacted)) out.push('* compacted before this step')
  return out.join('\n') + '\n'
}

/** The change list of one row: sections, the budget's withheld and restored sections, tools, config, in that order; `-` when none. */
function changesOf(row: StepRow): string {
  const parts: string[] = []
  const { added, withheld, restored } = row.sections
  if (row.first) parts.push(`${row.session > 1 ? `session ${row.session}: ` : ''}first render${added.length > 0 ? ` (${added.length} sections)` : ''}`)
  else if (signedNames(row.sections).length > 0) parts.push(signedNames(row.sections).join(' '))
  if (withheld.length > 0) parts.push(`withheld ${withheld.join(', ')} (budget)`)
  if (restored.length > 0) parts.push(`restored ${restored.join(', ')} (budget)`)
  if (row.first && row.headerReason !== undefined) parts.push('initial header')
  if (row.tools !== undefined) parts.push(`tools ${[...signedNames(row.tools), ...(row.tools.reordered ? ['reordered'] : [])].join(' ')}`)
  if (row.config !== undefined) parts.push(`config ${row.config.map((key) => `~${key}`).join(' ')}`)
  return parts.length === 0 ? '-' : parts.join('; ')
}

/** A logged cache break as text, such as `section "env" (layer global) variable "branch"`; not yet `terminalSafe`. */
export function breakText(cause: SessionLogCacheBreak): string {
  if (cause.cause === 'tools') {
    const names = cause.tools === undefined ? [] : signedNames(cause.tools)
    return names.length === 0 ? 'tools (reordered)' : `tools ${names.join(' ')}`
  }
  let out: string = cause.cause
  if (cause.section !== undefined) out += ` "${cause.section}"`
  if (cause.layer !== undefined) out += ` (layer ${cause.layer})`
  if (cause.variable !== undefined) out += ` variable "${cause.variable}"`
  return out
}

/** Names marked by what happened to them: `+added`, `-removed`, `~changed`, in that order. */
function signedNames(names: NonNullable<SessionLogCacheBreak['tools']>): string[] {
  return [...names.added.map((n) => `+${n}`), ...names.removed.map((n) => `-${n}`), ...names.changed.map((n) => `~${n}`)]
}

/** The thresholds of `check`: `minReusable` in [0, 1]; `maxBreaks` `undefined` for no limit. */
export type CheckThresholds = { readonly minReusable: number; readonly maxBreaks: number | undefined }

export const DEFAULT_MIN_REUSABLE = 0.9

/**
 * `promptloom check` on one log (SPEC §6): passes when its mean reusable share over the steps after each session's
 * first (`undefined` without any) is at least `minReusable` (within 1e-9) and at most `maxBreaks` steps have a `cacheBreak`.
 */
export function checkLog(log: AgentLog, thresholds: CheckThresholds) {
  const { rows, meanReusableShare: meanReusable } = agentModel(log)
  const breaks = rows.flatMap((row) =>
    row.cacheBreak === undefined ? [] : [{ step: row.step, session: row.session, text: breakText(row.cacheBreak) }],
  )
  // The tolerance absorbs the float sum's drift: 30 steps at exactly 9/10 average 0.8999999999999996.
  const below = meanReusable !== undefined && meanReusable < thresholds.minReusable - 1e-9
  const passed = !below && (thresholds.maxBreaks === undefined || breaks.length <= thresholds.maxBreaks)
  return { file: log.file, meanReusable, below, steps: rows.filter((row) => !row.first).length, breaks, passed }
}

/** `share` in percent to a tenth, rounded `down` or up past float noise, so a failing share never reads as its threshold. */
const percentRounded = (share: number, down: boolean): string =>
  `${((down ? Math.floor(1000 * share + 1e-6) : Math.ceil(1000 * share - 1e-6)) / 10).toFixed(1)}%`

/** The report `check` prints for `results`, ending in a line break; every string from a log or a path goes through `terminalSafe`. */
export function renderCheck(results: readonly ReturnType<typeof checkLog>[], thresholds: CheckThresholds): string {
  const lines = [
    `promptloom check: ${plural(results.length, 'log')}, min reusable ${percent(thresholds.minReusable)}, max breaks ${thresholds.maxBreaks ?? 'unlimited'}`,
  ]
  for (const result of results) {
    const { meanReusable: mean, below } = result
    const figure = mean === undefined ? '' : below ? percentRounded(mean, true) : percent(mean)
    const steps = plural(result.steps, 'step')
    const short = below ? ` (below ${percentRounded(thresholds.minReusable, false)})` : ''
    const reusable = mean === undefined ? 'no step after the first' : `reusable ${figure} over ${steps}${short}`
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
