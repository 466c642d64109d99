/**
 * `promptloom/node`: the file-backed session log, which needs Node built-ins.
 * The package root imports none, so it bundles for browsers and edge runtimes.
 *
 * @packageDocumentation
 */

export {
  createSessionLogWriter,
  readSessionLog,
  type SessionLogWriter,
  type SessionLogWriterOptions,
} from './surface/session-log-file.js'
