/**
 * The benchmark's rows: each is printed as a JSON line when reported, and
 * all of them as one table at the end (scenario, both contenders, ratio,
 * target and pass/MISS).
 */

export interface Row {
  scenario: string
  reference_ms?: number
  promptloom_ms?: number
  ratio?: number
  target?: string
  pass?: boolean
  note?: string
  /** Shown in the ratio column instead of `ratio` (e.g. a percentage). */
  display?: string
  /** Shown in the contender columns instead of a time (e.g. bytes). */
  reference_text?: string
  promptloom_text?: string
}

const rows: Row[] = []

/** Records `row` and prints it as one JSON line. */
export function report(row: Row): void {
  rows.push(row)
  process.stdout.write(`${JSON.stringify(row)}\n`)
}

function fmt(ms: number | undefined): string {
  if (ms === undefined) return ''
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`
}

/** Prints every reported row as one table, then `footer`. */
export function printTable(footer: string): void {
  console.table(
    rows.map((row) => ({
      scenario: row.scenario,
      reference: row.reference_text ?? fmt(row.reference_ms),
      promptloom: row.promptloom_text ?? fmt(row.promptloom_ms),
      ratio: row.display ?? (row.ratio === undefined ? '' : `${row.ratio.toFixed(row.ratio < 10 ? 2 : 1)}×`),
      target: row.target ?? '',
      result: row.pass === undefined ? (row.note ?? '') : row.pass ? 'pass' : 'MISS',
    })),
  )
  console.log(footer)
}
