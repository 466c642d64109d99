import type { SessionLogCacheBreak } from '../surface/session-log.js'

/**
 * One line of plain text for a logged cache break, for the terminal
 * (`inspect`, `check`): the cause, then the section, its layer and the
 * variable, or the tool names. Callers pass it through `terminalSafe`.
 *
 *   section "env" (layer global) variable "branch"
 *   tools +grep -ls ~read
 */
export function breakText(cause: SessionLogCacheBreak): string {
  if (cause.cause === 'tools') {
    const tools = cause.tools
    const names = tools === undefined ? [] : signedNames(tools)
    return names.length === 0 ? 'tools (reordered)' : `tools ${names.join(' ')}`
  }
  let out: string = cause.cause
  if (cause.section !== undefined) out += ` "${cause.section}"`
  if (cause.layer !== undefined) out += ` (layer ${cause.layer})`
  if (cause.variable !== undefined) out += ` variable "${cause.variable}"`
  return out
}

/** Names marked by what happened to them: `+added`, `-removed`, `~changed`, in that order. */
export function signedNames(names: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] }): string[] {
  return [...names.added.map((n) => `+${n}`), ...names.removed.map((n) => `-${n}`), ...names.changed.map((n) => `~${n}`)]
}
