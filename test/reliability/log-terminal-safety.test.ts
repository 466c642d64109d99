import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { terminalSafe } from '../../src/cli/inspect.js'
import { cli, headerLine, jsonl, messageLine, stepLine } from '../cli/fixtures.js'

// A session log is untrusted input: nothing the CLI prints from it may reach
// the terminal as a control sequence (title, clipboard, cursor, fake output).

const dir = mkdtempSync(join(tmpdir(), 'promptloom-terminal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const TITLE = '\x1b]0;pwned\x07'
const CLIPBOARD = '\x1b]52;c;ZWNobyBoaQ==\x07'
const CLEAR = '\x1b[2J'
const C1_CSI = '\u009b31m'
const BIDI = '\u202eevil'
const HOSTILE = [TITLE, CLIPBOARD, CLEAR, C1_CSI, BIDI]

/** Any character a terminal could act on, other than the line breaks the CLI writes itself. */
const ACTIONABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

function hostileLog(): string {
  return jsonl(
    stepLine(1, { sections: ['identity', ...HOSTILE] }),
    messageLine('prompt', 'append'),
    headerLine(['read'], 'initial', { model: 'm' }),
    stepLine(2, {
      stablePrefixLength: 3,
      changedSections: HOSTILE,
      sections: ['identity', `web${CLEAR}`],
      withheld: [TITLE],
      warnings: [{ kind: 'volatile-variable', section: TITLE, layer: CLIPBOARD, variable: C1_CSI, message: `careful ${TITLE}${CLIPBOARD}` }],
    }),
    headerLine(['read', `grep${TITLE}`], `tools changed ${CLEAR}`, { model: 'm', [`key${C1_CSI}`]: 1 }),
    '{"type":"ste',
  )
}

describe('terminalSafe', () => {
  test('shows C0, DEL, C1, separators and bidirectional controls as escapes and leaves other text alone', () => {
    expect(terminalSafe(`a\x1b[0m\tb\u007f\u009b\u2028\u202e\u2066 é 😀 "\\"`)).toBe('a\\x1b[0m\\x09b\\x7f\\u009b\\u2028\\u202e\\u2066 é 😀 "\\"')
  })
})

describe('inspect', () => {
  test('prints section names, tool names, config keys and warnings from the log with their control characters escaped', () => {
    const path = join(dir, 'hostile.jsonl')
    writeFileSync(path, hostileLog())
    const run = cli('inspect', path)
    expect(run.code).toBe(0)
    expect(ACTIONABLE.test(run.stdout)).toBe(false)
    expect(run.stdout).toContain('+web\\x1b[2J -\\x1b]52;c;ZWNobyBoaQ==\\x07 -\\x1b[2J -\\u009b31m -\\u202eevil; withheld \\x1b]0;pwned\\x07 (budget)')
    expect(run.stdout).toContain('tools +grep\\x1b]0;pwned\\x07')
    expect(run.stdout).toContain('config ~key\\u009b31m')
    expect(run.stdout).toContain('! careful \\x1b]0;pwned\\x07\\x1b]52;c;ZWNobyBoaQ==\\x07')
  })

  test('prints an agent and file name with control characters escaped, on stdout and in the torn-line warning', () => {
    const path = join(dir, `agent${TITLE}.jsonl`)
    writeFileSync(path, hostileLog())
    const run = cli('inspect', path)
    expect(run.code).toBe(0)
    expect(ACTIONABLE.test(run.stdout + run.stderr)).toBe(false)
    expect(run.stdout.split('\n')[0]).toContain('agent\\x1b]0;pwned\\x07 (')
    expect(run.stderr).toContain('agent\\x1b]0;pwned\\x07.jsonl" line 6: skipped a torn line')
  })
})

describe('errors and report messages', () => {
  test('an error quoting log content is escaped, including C1 controls JSON leaves raw', () => {
    const path = join(dir, 'bad-type.jsonl')
    writeFileSync(path, jsonl(stepLine(1), JSON.stringify({ type: `note${C1_CSI}${BIDI}` })))
    const run = cli('inspect', path)
    expect(run.code).toBe(1)
    expect(ACTIONABLE.test(run.stderr)).toBe(false)
    expect(run.stderr).toContain('unknown record type "note\\u009b31m\\u202eevil"')
  })

  test('a file name from the command line is escaped in "cannot read" and in "report written"', () => {
    const missing = join(dir, `missing${CLEAR}.jsonl`)
    const read = cli('inspect', missing)
    expect([read.code, ACTIONABLE.test(read.stderr)]).toEqual([1, false])
    expect(read.stderr).toContain('missing\\x1b[2J.jsonl')

    const input = join(dir, 'ok.jsonl')
    writeFileSync(input, hostileLog())
    const out = join(dir, `out${TITLE}.html`)
    const run = cli('report', input, '-o', out)
    expect(run.code).toBe(0)
    expect(ACTIONABLE.test(run.stdout + run.stderr)).toBe(false)
    expect(run.stdout).toBe(`report written: ${join(dir, 'out\\x1b]0;pwned\\x07.html')}\n`)
  })

  test('an unknown command and an unknown flag are escaped', () => {
    const command = cli(`show${TITLE}`)
    const flag = cli('report', `--x${CLEAR}`)
    expect([command.code, flag.code]).toEqual([1, 1])
    expect(ACTIONABLE.test(command.stderr + flag.stderr)).toBe(false)
  })
})
