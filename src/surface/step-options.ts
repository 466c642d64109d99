/**
 * The step surface's option checks: each returns the checked value or throws
 * a `TypeError` naming the option, before the step touches any state.
 */

import { describeValue } from '../assembly/errors.js'
import type { SystemPromptUpdate } from './step-surface.js'

const UPDATE_MODES: readonly SystemPromptUpdate[] = ['replace', 'in-history']

/** `value` as an update mode; `undefined` when not given. */
export function updateMode(what: string, value: unknown): SystemPromptUpdate | undefined {
  if (value === undefined || UPDATE_MODES.includes(value as SystemPromptUpdate)) {
    return value as SystemPromptUpdate | undefined
  }
  throw new TypeError(`${what} must be 'replace' or 'in-history' (got ${describeValue(value)})`)
}

/** A required `historyLength`. After the first step node 0 holds the system message, so an append there would overwrite it: `min` is 1. */
export function requireHistoryLength(value: unknown, min: 0 | 1): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value
  const rule = min === 0 ? 'a non-negative integer' : 'an integer of at least 1 after the first step (node 0 holds the system message)'
  throw new TypeError(
    `step option "historyLength" must be ${rule} when systemPromptUpdate is 'in-history' (got ${describeValue(value)}); pass the number of messages in the cached history, where the updated prompt is appended`,
  )
}

/** An optional boolean step option. */
export function optionalBoolean(key: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  throw new TypeError(`step option "${key}" must be a boolean (got ${describeValue(value)})`)
}

/** The JSON text of the step's config (`'{}'` when none). */
export function configJsonOf(config: unknown): string {
  if (config === undefined) return '{}'
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new TypeError(`step option "config" must be a plain object (got ${describeValue(config)})`)
  }
  try {
    return JSON.stringify(config)
  } catch (error) {
    throw new TypeError(`step option "config" must be JSON-serializable for the session log (${String(error)})`)
  }
}

