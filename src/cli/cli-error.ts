/** A failure the CLI reports as one `promptloom: …` line on stderr with exit code 1 (bad usage, an unreadable log, an unwritable output). */
export class CliError extends Error {
  override readonly name = 'CliError'
}
