/**
 * The session log's record schema as data: one table of field checks per
 * record type. Reading a record keeps exactly the known fields, checked (a
 * newer writer's extra fields are ignored). A new field is one edit: add it to
 * the record's interface and the compiler asks for its entry here.
 */

import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'
import type { SessionLogCacheBreak, SessionLogRecord, SessionLogStepRecord, SessionLogWarning } from './session-log.js'

/** A record that breaks the schema; the reader adds the file and line. */
export class RecordRuleError extends Error {
  override readonly name = 'RecordRuleError'
}

/** Checks one JSON value found at `path` (e.g. `warnings[0].section`) and returns it typed; `undefined` is a missing field. */
type Check<T> = (value: unknown, path: string) => T

/** The table for record type `R`: a check for every property but `type` (an optional one may return `undefined`). */
type FieldTable<R> = { readonly [K in Exclude<keyof R, 'type'>]-?: Check<R[K]> }

function fail(path: string, rule: string, value: unknown): never {
  throw new RecordRuleError(`"${path}" must be ${rule} (got ${shown(value)})`)
}

function must<T>(holds: (value: unknown) => boolean, rule: string): Check<T> {
  return (value, path) => (holds(value) ? (value as T) : fail(path, rule, value))
}

function optional<T>(check: Check<T>): Check<T | undefined> {
  return (value, path) => (value === undefined ? undefined : check(value, path))
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A step number, surface node, length or byte count. */
const count = must<number>((value) => Number.isSafeInteger(value) && (value as number) >= 0, 'a non-negative integer')
/** Surfaces count steps from 1. */
const stepNumber = must<number>((value) => Number.isSafeInteger(value) && (value as number) >= 1, 'a positive integer')
/** `countTokens` may estimate, so fractions are fine. */
const tokenCount = must<number>((value) => Number.isFinite(value) && (value as number) >= 0, 'a non-negative finite number')
const boolean = must<boolean>((value) => typeof value === 'boolean', 'true or false')
const string = must<string>((value) => typeof value === 'string', 'a string')
const jsonObject = must<Readonly<Record<string, unknown>>>(isObject, 'an object')
/** A layer label, or `null` for a part no registration supplied. */
const layerLabel = must<string | null>((value) => value === null || typeof value === 'string', 'a string or null')
/** A tool declaration is the provider's JSON, kept whole; only its name is the log's business. */
const tool = must<ToolSchema>((value) => isObject(value) && typeof value.name === 'string', 'an object with a string "name"')

function listOf<T>(item: Check<T>): Check<readonly T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) fail(path, 'an array', value)
    value.forEach((each, i) => item(each, `${path}[${i}]`))
    return value as T[]
  }
}

function oneOf<T extends string>(...allowed: T[]): Check<T> {
  return must((value) => allowed.includes(value as T), allowed.map((a) => `"${a}"`).join(' or '))
}

/** A nested object read by its own table (known fields only). */
function objectOf<R>(table: FieldTable<R>, rule: string): Check<R> {
  return (value, path) => (isObject(value) ? (readFields(table, value, `${path}.`) as R) : fail(path, rule, value))
}

const strings = listOf(string)

/** Stability and budget findings alike, read leniently by kind. */
const WARNING_FIELDS = {
  kind: string,
  message: string,
  section: optional(string),
  layer: optional(string),
  variable: optional(string),
  sections: optional(strings),
}

const warnings = listOf(objectOf<unknown>(WARNING_FIELDS, 'an object with string "kind" and "message"') as Check<SessionLogWarning>)

const NO_WARNINGS: readonly SessionLogWarning[] = Object.freeze([])

const TOOL_NAME_FIELDS: FieldTable<NonNullable<SessionLogCacheBreak['tools']>> = { added: strings, removed: strings, changed: strings }

const CACHE_BREAK_FIELDS: FieldTable<SessionLogCacheBreak> = {
  cause: oneOf('tools', 'config', 'withheld', 'restored', 'section', 'removed', 'added'),
  section: optional(string),
  layer: optional(string),
  variable: optional(string),
  tools: optional(objectOf(TOOL_NAME_FIELDS, 'an object with "added", "removed" and "changed" name lists')),
}

const STEP_FIELDS: FieldTable<SessionLogStepRecord> = {
  step: stepNumber,
  compacted: boolean,
  stablePrefixLength: count,
  stablePrefixBytes: count,
  changedSections: strings,
  firstChangedSection: optional(string),
  // Logs written before step warnings existed lack them.
  warnings: (value, path) => (value === undefined ? NO_WARNINGS : warnings(value, path)),
  toolsChanged: optional(boolean),
  configChanged: optional(boolean),
  reusablePrefixLength: optional(count),
  reusablePrefixBytes: optional(count),
  stablePrefixTokens: optional(tokenCount),
  reusablePrefixTokens: optional(tokenCount),
  promptTokens: optional(tokenCount),
  sections: optional(strings),
  sectionLengths: optional(listOf(count)),
  sectionLayers: optional(listOf(layerLabel)),
  sectionTokens: optional(listOf(tokenCount)),
  withheld: optional(strings),
  overBudget: optional(boolean),
  expectedCachedTokens: optional(tokenCount),
  cacheNote: optional(oneOf('below-minimum', 'no-breakpoint')),
  cacheBreak: optional(objectOf(CACHE_BREAK_FIELDS, 'an object with a "cause"')),
}

const RECORD_FIELDS: { readonly [T in SessionLogRecord['type']]: FieldTable<Extract<SessionLogRecord, { type: T }>> } = {
  step: STEP_FIELDS,
  'system/message': { op: oneOf('append', 'replace'), node: count, text: string },
  'request/header': { config: jsonObject, tools: listOf(tool), reason: string },
  'context/snapshot': {
    text: string,
    sections: listOf(objectOf<RenderedContextSection>({ name: string, text: string }, 'an object with string "name" and "text"')),
  },
  usage: {
    step: stepNumber,
    inputTokens: tokenCount,
    cachedInputTokens: tokenCount,
    cacheWriteTokens: optional(tokenCount),
    cacheWrite5mTokens: optional(tokenCount),
    cacheWrite1hTokens: optional(tokenCount),
    predictedTokens: optional(tokenCount),
    expectedTokens: optional(tokenCount),
  },
}

/** The fields of `table` that `record` has, checked. */
function readFields(table: Readonly<Record<string, Check<unknown>>>, record: Readonly<Record<string, unknown>>, prefix = ''): object {
  const out: Record<string, unknown> = {}
  for (const [key, check] of Object.entries(table)) {
    const value = check(record[key], prefix + key)
    if (value !== undefined) out[key] = value
  }
  return out
}

/**
 * Checks one parsed JSON line as a session-log record and returns a new record
 * holding only the known fields. Throws a `RecordRuleError` naming the first
 * field that breaks its rule (the caller adds where).
 */
export function readRecord(value: unknown): SessionLogRecord {
  if (!isObject(value)) throw new RecordRuleError(`expected a JSON object with a "type" (got ${shown(value)})`)
  const type = value.type
  if (typeof type !== 'string' || !Object.hasOwn(RECORD_FIELDS, type)) {
    throw new RecordRuleError(`unknown record type ${shown(type)}; known types: ${Object.keys(RECORD_FIELDS).join(', ')}`)
  }
  try {
    return { type, ...readFields(RECORD_FIELDS[type as SessionLogRecord['type']], value) } as SessionLogRecord
  } catch (error) {
    if (error instanceof RecordRuleError) throw new RecordRuleError(`a "${type}" record's ${error.message}`)
    throw error
  }
}

/** A short JSON rendering of a bad value for an error message. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing'
  const json = JSON.stringify(value)
  return json.length > 60 ? `${json.slice(0, 57)}...` : json
}
