// The closing table of the loop examples: per step, the cached tokens the step surface expected by the
// provider's rules beside the ones the simulator reported, split into tools, system and history.
import type { StepResult, UsageRecord } from '../src/index.js'
import type { SimulatedExchange } from './simulator/index.js'

/** One step of a loop example. */
export interface CacheRow {
  readonly step: number
  /** What the model did: `→ read`, `→ text`. */
  readonly reply: string
  readonly result: StepResult
  readonly usage: UsageRecord
  /** The simulator's record of the request. */
  readonly simulated: SimulatedExchange
}

const COLUMNS = ['step', 'reply', 'system', 'expected', 'observed', '= tools', '+ system', '+ history', 'written', 'input', 'note'] as const

function noteOf({ step, result }: CacheRow): string {
  if (step === 1) return 'first step'
  if (result.toolsChanged) return 'tools changed: nothing reusable'
  return result.cacheNote ?? ''
}

/** A range of numbers as text: `412`, or `412–470`. */
function span(values: readonly number[]): string {
  const low = Math.min(...values)
  const high = Math.max(...values)
  return low === high ? String(low) : `${low}–${high}`
}

/**
 * Prints the table under a `===== title =====` header, then one line that says why observed and
 * expected differ, from the figures themselves. `history` names what the provider caches of the
 * conversation.
 */
export function printCacheTable(title: string, rows: readonly CacheRow[], history: string): void {
  const cells = rows.map((row) => {
    const cached = row.simulated.cachedTokensBySection
    return [
      String(row.step),
      row.reply,
      String(row.result.promptTokens),
      String(row.result.expectedCachedTokens),
      String(row.usage.cachedInputTokens),
      String(cached.tools),
      String(cached.system),
      String(cached.messages),
      row.usage.cacheWriteTokens === undefined ? '—' : String(row.usage.cacheWriteTokens),
      String(row.usage.inputTokens),
      noteOf(row),
    ]
  })
  const widths = COLUMNS.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)))
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => (i === 1 || i === values.length - 1 ? value.padEnd(widths[i]!) : value.padStart(widths[i]!)))
      .join('  ')
      .trimEnd()
  console.log([`===== ${title} =====`, line(COLUMNS), ...cells.map(line)].join('\n'))

  const reused = rows.filter((row) => (row.result.expectedCachedTokens ?? 0) > 0)
  if (reused.length === 0) {
    console.log('why observed differs from expected: no step was expected to reuse the system prompt')
    return
  }
  // The system share = expected + what expected rounded off + the framing the simulator counts around the text.
  const rounding = reused.map((row) => row.result.promptTokens! - row.result.expectedCachedTokens!)
  const framing = reused.map((row) => row.simulated.cachedTokensBySection.system - row.result.promptTokens!)
  const extra = [
    rounding.some((tokens) => tokens !== 0) && `${span(rounding)} that expected rounds down to the provider's granularity`,
    framing.some((tokens) => tokens !== 0) && `${span(framing)} of message framing the simulator counts`,
  ].filter(Boolean)
  const systemShare = extra.length === 0 ? 'equals expected on every reused step' : `is expected plus ${extra.join(' plus ')}`
  console.log(
    `why observed differs from expected: expected covers the system prompt only (counted with the simulator's tokenizer), ` +
      `the simulator also serves the tools (${span(reused.map((row) => row.simulated.cachedTokensBySection.tools))} tokens, each tool's JSON) and ${history}; ` +
      `its system share ${systemShare}`,
  )
}
