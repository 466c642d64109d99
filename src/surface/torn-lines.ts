/**
 * Torn lines in a session log. A process that dies in the middle of a write
 * leaves the record it was writing cut short: a line that starts like a
 * record (`{`) but is not valid JSON. The reader skips one such line per log,
 * with a warning, when it is the last line of the log, or when the record
 * after it is a step record (a writer that resumed the log starts with its
 * surface's step). When the torn line itself ends in a complete step record
 * (a writer that resumed without starting a new line appended it there),
 * that record is kept. Any other line that is not JSON, including a second
 * torn line, is an error naming the file and the line.
 */

const GLUED_STEP = '{"type":"step"'

/** The torn-line policy of one log read; the reader feeds it every line in order. */
export class TornLines {
  readonly #label: string
  readonly #error: (line: number, rule: string) => Error
  /** The line skipped (at most one per log), as a message naming it. */
  readonly skipped: { readonly line: number; readonly message: string }[] = []
  /** A line that is not JSON, waiting for the record after it. */
  #suspect: { readonly line: number; readonly reason: string } | undefined

  /** `label` names the log in messages; `error` makes the error thrown for a line. */
  constructor(label: string, error: (line: number, rule: string) => Error) {
    this.#label = label
    this.#error = error
  }

  /** A line that parsed: the line waiting before it was torn if this is a step record, else an error. */
  parsed(value: unknown): void {
    if (this.#suspect !== undefined) this.#settle((value as { type?: unknown } | null)?.type === 'step')
  }

  /**
   * A line that is not JSON: throws when it cannot be a torn line, returns the
   * complete step record glued to its end (skipping the torn start), or
   * returns `undefined` and waits for the next record to decide.
   */
  notJson(raw: string, line: number, reason: string): unknown {
    if (this.#suspect !== undefined) this.#settle(false)
    if (!raw.startsWith('{')) throw this.#error(line, notJson(reason))
    if (this.skipped.length > 0) {
      throw this.#error(
        line,
        `${notJson(reason)}; line ${this.skipped[0]!.line} was already skipped as a torn line and a log holds at most one (the remains of a write cut short by a crash), so the log is damaged here`,
      )
    }
    const glued = gluedStep(raw)
    if (glued === undefined) {
      this.#suspect = { line, reason }
      return undefined
    }
    this.#skip(line, 'skipped the torn start of the line (a record cut short when the writing process stopped) and kept the step record a resumed writer appended to it')
    return glued
  }

  /** The log ended: a line still waiting was its torn last line. */
  end(): void {
    if (this.#suspect !== undefined) this.#settle(true)
  }

  #settle(nextIsStep: boolean): void {
    const suspect = this.#suspect!
    this.#suspect = undefined
    if (!nextIsStep) {
      throw this.#error(
        suspect.line,
        `${notJson(suspect.reason)} (a line cut short by a crash is skipped only as the last line of the log or right before the step record of a writer that resumed it)`,
      )
    }
    this.#skip(suspect.line, 'skipped a torn line (a record cut short when the writing process stopped); the complete records around it were kept')
  }

  #skip(line: number, what: string): void {
    this.skipped.push({ line, message: `${this.#label} line ${line}: ${what}` })
  }
}

function notJson(reason: string): string {
  return `not JSON (${reason}); each line holds one JSON object`
}

/** The complete step record at the end of a torn line, if one is there. */
function gluedStep(raw: string): unknown {
  for (let at = raw.indexOf(GLUED_STEP, 1); at > 0; at = raw.indexOf(GLUED_STEP, at + 1)) {
    try {
      const value: unknown = JSON.parse(raw.slice(at))
      if ((value as { type?: unknown } | null)?.type === 'step') return value
    } catch {
      // Not where the appended record starts; try the next candidate.
    }
  }
  return undefined
}
