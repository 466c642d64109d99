// C0 controls, DEL, C1 controls (U+009B is a one-character CSI), the line and
// paragraph separators, and the bidirectional overrides that reorder text.
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

/** A failure the CLI reports as one `promptloom: …` line on stderr with exit code 1 (bad usage, an unreadable log, an unwritable output). */
export class CliError extends Error {
  override readonly name = 'CliError'
}
