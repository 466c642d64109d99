/**
 * The session log's record schema as data: one field table per record type,
 * each field a validator. Reading a record keeps exactly the known fields
 * (a newer writer's extra fields are ignored) and validates every one that is
 * present, so the reader is strict about what it understands and tolerant of
 * what it does not.
 *
 * A new field is one edit: add it to the record's interface and the compiler
 * asks for its entry here, e.g. `expectedCachedTokens: optional(tokenCount)`.
 */

import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'
import type { SessionLogCacheBreak, SessionLogRecord, SessionLogStepRecord, SessionLogWarning } from './session-log.js'
import type { ContextSnapshotEvent, RequestHeaderEvent, SystemMessageEvent } from './surface-events.js'
import type { UsageRecord } from './usage-record.js'

/** A record that breaks the schema; the reader adds the file and line. */
export class RecordRuleError extends Error {
  override readonly name = 'RecordRuleError'
}

/** Validates one JSON value found at `path` (e.g. `warnings[0].section`) and returns it typed. */
type Check<T> = (value: unknown, path: string) => T

/** A field every record carries; `fallback` stands in when a log from before the field existed lacks it. */
interface RequiredField<T> {
  readonly required: true
  readonly check: Check<T>
  readonly fallback?: T
}

/** A field a record may carry; absent stays absent. */
interface OptionalField<T> {
  readonly required: false
  readonly check: Check<T>
}

/** The table for record type `R`: every property but `type`, required or optional as `R` declares it. */
type FieldTable<R> = {
  readonly [K in Exclude<keyof R, 'type'>]-?: undefined extends R[K] ? OptionalField<Exclude<R[K], undefined>> : RequiredField<R[K]>
}

const required = <T>(check: Check<T>, fallback?: T): RequiredField<T> =>
  fallback === undefined ? { required: true, check } : { required: true, check, fallback }
const optional = <T>(check: Check<T>): OptionalField<T> => ({ required: false, check })

// ── checks ──────────────────────────────────────────────────────────────────

function fail(path: string, rule: string, value: unknown): never {
  throw new RecordRuleError(`"${path}" must be ${rule} (got ${shown(value)})`)
}

/** A step number, surface node, length or byte count. */
const count: Check<number> = (value, path) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : fail(path, 'a non-negative integer', value)

/** A step number: surfaces count from 1. */
const stepNumber: Check<number> = (value, path) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 ? value : fail(path, 'a positive integer', value)

/** A token count: `countTokens` may estimate, so fractions are fine. */
const tokenCount: Check<number> = (value, path) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fail(path, 'a non-negative finite number', value)

const boolean: Check<boolean> = (value, path) => (typeof value === 'boolean' ? value : fail(path, 'true or false', value))

const string: Check<string> = (value, path) => (typeof value === 'string' ? value : fail(path, 'a string', value))

const jsonObject: Check<Readonly<Record<string, unknown>>> = (value, path) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : fail(path, 'an object', value)

function listOf<T>(item: Check<T>): Check<readonly T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) fail(path, 'an array', value)
    for (let i = 0; i < value.length; i++) item(value[i], `${path}[${i}]`)
    return value as T[]
  }
}

function oneOf<T extends string>(...allowed: T[]): Check<T> {
  return (value, path) => (allowed.includes(value as T) ? (value as T) : fail(path, allowed.map((a) => `"${a}"`).join(' or '), value))
}

/** A nested object read by its own table (known fields only). */
function objectOf<R>(table: FieldTable<R>, rule: string): Check<R> {
  return (value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, rule, value)
    return readFields(table as unknown as AnyFieldTable, value as Record<string, unknown>, `${path}.`) as R
  }
}

const strings = listOf(string)

/** A tool declaration is the provider's JSON, kept whole; only its name is the log's business. */
const tool: Check<ToolSchema> = (value, path) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { name?: unknown }).name === 'string'
    ? (value as ToolSchema)
    : fail(path, 'an object with a string "name"', value)

// ── tables ──────────────────────────────────────────────────────────────────

/** Every shape a logged warning takes (stability and budget findings), read leniently by kind. */
interface LoggedWarningShape {
  readonly kind: string
  readonly message: string
  readonly section?: string
  readonly layer?: string
  readonly variable?: string
  readonly sections?: readonly string[]
}

const WARNING_FIELDS: FieldTable<LoggedWarningShape> = {
  kind: required(string),
  message: required(string),
  section: optional(string),
  layer: optional(string),
  variable: optional(string),
  sections: optional(strings),
}

const warning = objectOf(WARNING_FIELDS, 'an object with string "kind" and "message"') as Check<SessionLogWarning>

const NO_WARNINGS: readonly SessionLogWarning[] = Object.freeze([])

const TOOL_NAME_FIELDS: FieldTable<NonNullable<SessionLogCacheBreak['tools']>> = {
  added: required(strings),
  removed: required(strings),
  changed: required(strings),
}

const CACHE_BREAK_FIELDS: FieldTable<SessionLogCacheBreak> = {
  cause: required(oneOf('tools', 'config', 'withheld', 'restored', 'section', 'removed', 'added')),
  section: optional(string),
  layer: optional(string),
  variable: optional(string),
  tools: optional(objectOf(TOOL_NAME_FIELDS, 'an object with "added", "removed" and "changed" name lists')),
}

/** A layer label, or `null` for a part no registration supplied. */
const layerLabel: Check<string | null> = (value, path) => (value === null || typeof value === 'string' ? value : fail(path, 'a string or null', value))

const STEP_FIELDS: FieldTable<SessionLogStepRecord> = {
  step: required(stepNumber),
  compacted: required(boolean),
  stablePrefixLength: required(count),
  stablePrefixBytes: required(count),
  changedSections: required(strings),
  firstChangedSection: optional(string),
  warnings: required(listOf(warning), NO_WARNINGS),
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

const SYSTEM_MESSAGE_FIELDS: FieldTable<SystemMessageEvent> = {
  op: required(oneOf('append', 'replace')),
  node: required(count),
  text: required(string),
}

const REQUEST_HEADER_FIELDS: FieldTable<RequestHeaderEvent> = {
  config: required(jsonObject),
  tools: required(listOf(tool)),
  reason: required(string),
}

const CONTEXT_SECTION_FIELDS: FieldTable<RenderedContextSection> = {
  name: required(string),
  text: required(string),
}

const CONTEXT_SNAPSHOT_FIELDS: FieldTable<ContextSnapshotEvent> = {
  text: required(string),
  sections: required(listOf(objectOf(CONTEXT_SECTION_FIELDS, 'an object with string "name" and "text"'))),
}

const USAGE_FIELDS: FieldTable<UsageRecord> = {
  step: required(stepNumber),
  inputTokens: required(tokenCount),
  cachedInputTokens: required(tokenCount),
  cacheWriteTokens: optional(tokenCount),
  cacheWrite5mTokens: optional(tokenCount),
  cacheWrite1hTokens: optional(tokenCount),
  predictedTokens: optional(tokenCount),
  expectedTokens: optional(tokenCount),
}

const RECORD_FIELDS: { readonly [T in SessionLogRecord['type']]: FieldTable<Extract<SessionLogRecord, { type: T }>> } = {
  step: STEP_FIELDS,
  'system/message': SYSTEM_MESSAGE_FIELDS,
  'request/header': REQUEST_HEADER_FIELDS,
  'context/snapshot': CONTEXT_SNAPSHOT_FIELDS,
  usage: USAGE_FIELDS,
}

/** The record types, in the order errors list them. */
const RECORD_TYPES = Object.keys(RECORD_FIELDS) as readonly SessionLogRecord['type'][]

// ── reading ─────────────────────────────────────────────────────────────────

/** Any record's table, as `readFields` walks it. */
type AnyFieldTable = Readonly<Record<string, RequiredField<unknown> | OptionalField<unknown>>>

/** Copies the fields of `table` from `record` into `out` (validated), and returns `out`. */
function readFields(table: AnyFieldTable, record: Readonly<Record<string, unknown>>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const key in table) {
    const field = table[key]!
    const value = record[key]
    if (value === undefined) {
      if (!field.required) continue
      if (field.fallback === undefined) field.check(value, prefix + key)
      out[key] = field.fallback
      continue
    }
    out[key] = field.check(value, prefix + key)
  }
  return out
}

/**
 * Validates one parsed JSON line as a session-log record and returns a new
 * record holding only the known fields. Throws a `RecordRuleError` naming the
 * first field that breaks its rule (the caller adds where).
 */
export function readRecord(value: unknown): SessionLogRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RecordRuleError(`expected a JSON object with a "type" (got ${shown(value)})`)
  }
  const type = (value as { type?: unknown }).type
  if (typeof type !== 'string' || !Object.hasOwn(RECORD_FIELDS, type)) {
    throw new RecordRuleError(`unknown record type ${shown(type)}; known types: ${RECORD_TYPES.join(', ')}`)
  }
  const table = RECORD_FIELDS[type as SessionLogRecord['type']] as unknown as AnyFieldTable
  try {
    return readFields(table, value as Record<string, unknown>, '', { type }) as unknown as SessionLogRecord
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
