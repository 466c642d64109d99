/**
 * `promptloom/node`: the parts of promptloom that need Node built-ins. The
 * package root (`promptloom`) imports none, so it bundles for browsers and
 * edge runtimes; import the file-backed session log from here.
 *
 * @packageDocumentation
 */

export {
  createSessionLogWriter,
  readSessionLog,
  type SessionLogWriter,
  type SessionLogWriterOptions,
} from './surface/session-log-file.js'
