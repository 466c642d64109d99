import type { LayerRef } from '../assembly/entries.js'
import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'
import { scopeLabel } from '../scope/scope-key.js'
import type { BudgetWarning } from './budget.js'
import type { CacheBreak } from './cache-break.js'
import type { StabilityWarning } from './stability-lint.js'
import type { StepResult, SurfaceEvent, UsageRecord } from './step-result.js'

/**
 * The JSONL session log: one JSON object per line. Each step is a `step` record, then that step's surface events in
 * order, then any `usage` record:
 *
 *   {"type":"step","step":1,"compacted":false,"stablePrefixLength":0,…}
 *   {"type":"system/message","op":"append","node":0,"text":"You are …"}
 *   {"type":"request/header","config":{…},"tools":[…],"reason":"initial"}
 *   {"type":"step","step":2,…}
 *
 * The step record comes first so a reader applies its compaction before its events. A step number at or below the
 * previous one starts the next surface's session in the same file. A field named like a `StepResult` field holds that
 * field (layers as labels); an optional one is absent when the result lacks it or the log predates it.
 */
export interface SessionLogStepRecord
  extends Pick<StepResult, 'step' | 'compacted' | 'stablePrefixLength' | 'stablePrefixBytes' | 'firstChangedSection'>,
    Pick<StepResult, 'stablePrefixTokens' | 'reusablePrefixTokens' | 'promptTokens' | 'expectedCachedTokens' | 'cacheNote'>,
    Pick<StepResult, 'withheld' | 'overBudget'>,
    Partial<Pick<StepResult, 'toolsChanged' | 'configChanged' | 'reusablePrefixLength' | 'reusablePrefixBytes'>> {
  readonly type: 'step'
  readonly changedSections: readonly string[]
  readonly warnings: readonly SessionLogWarning[]
  /** The sent section names in prompt order (so a reader tells added, removed and changed apart); absent when unknown. */
  readonly sections?: readonly string[]
  /** The UTF-16 length of each sent part, parallel to `sections`: cut from the step's prompt, they give every part's text. */
  readonly sectionLengths?: readonly number[]
  /** The supplying layer of each sent part, parallel to `sections`: `'global'`, the scope's label, or `null` when unknown. */
  readonly sectionLayers?: readonly (string | null)[]
  /** `StepResult.partTokens`, parallel to `sections` (only with a budget that gives the token figures). */
  readonly sectionTokens?: readonly number[]
  readonly cacheBreak?: SessionLogCacheBreak
}

/** A `CacheBreak` as logged: the layer becomes `'global'` or the scope's label (absent when unknown). */
export type SessionLogCacheBreak = Omit<CacheBreak, 'layer'> & { readonly layer?: string }

/** A step warning as logged: a stability finding with its layer as a label, or a budget finding as it is. */
export type SessionLogWarning = SessionLogStabilityWarning | BudgetWarning

/** A `StabilityWarning` as logged: the layer becomes `'global'` or the scope's label (absent when unknown). */
export type SessionLogStabilityWarning = Omit<StabilityWarning, 'layer'> & { readonly layer?: string }

/** One line of the session log. */
export type SessionLogRecord = SessionLogStepRecord | SurfaceEvent | UsageRecord

/**
 * The JSONL lines of one step, each ending in `\n`: the step record, then the step's events in order (what
 * `promptloom/node`'s `SessionLogWriter` appends; pure, so any runtime can ship them elsewhere).
 */
export function serializeStep(result: StepResult): string {
  const { parts } = result.rendered
  const logged = {
    warnings: result.warnings.map((warning) => ('section' in warning ? withLayerLabel(warning) : warning)),
    sections: parts.map((part) => part.name),
    sectionLengths: parts.map((part) => part.text.length),
    sectionLayers: parts.map((part) => (part.layer === undefined ? null : layerLabel(part.layer))),
    sectionTokens: result.partTokens,
    overBudget: result.withheld === undefined ? undefined : result.overBudget === true,
    cacheBreak: result.cacheBreak === undefined ? undefined : withLayerLabel(result.cacheBreak),
  } satisfies Partial<SessionLogStepRecord>
  // In `STEP_FIELDS` order, each field as `logged` has it or else as the result does; JSON.stringify leaves out undefined.
  // A record field in neither is a compile error at `result[…]`.
  type Logged = keyof typeof logged
  const fields = Object.keys(STEP_FIELDS) as (keyof typeof STEP_FIELDS)[]
  const record = Object.fromEntries(
    fields.map((key) => [key, key in logged ? logged[key as Logged] : result[key as Exclude<typeof key, Logged>]]),
  )
  return [{ type: 'step', ...record }, ...result.events].map((line) => JSON.stringify(line) + '\n').join('')
}

/**
 * The line `writeUsage` appends for `record`, ending in `\n`. Throws a `TypeError` for a record that is not a usage
 * record, or one the reader would reject (naming the field: a NaN count would be written as `null` and poison the log).
 */
export function serializeUsage(record: UsageRecord): string {
  if (typeof record !== 'object' || record === null || record.type !== 'usage') {
    throw new TypeError('writeUsage expects the record surface.observeUsage() returned ({ type: "usage", step, … })')
  }
  readRecord(record, (rule) => {
    throw new TypeError(`writeUsage: ${rule}`)
  })
  return JSON.stringify(record) + '\n'
}

/** A layer as the log (and telemetry) shows it: `'global'`, or the scope key's label. */
export function layerLabel(layer: LayerRef): string {
  return layer === 'global' ? 'global' : scopeLabel(layer)
}

function withLayerLabel<T extends { readonly layer?: LayerRef }>(value: T): Omit<T, 'layer'> & { readonly layer?: string } {
  const { layer, ...rest } = value
  return layer === undefined ? rest : { ...rest, layer: layerLabel(layer) }
}

// The record schema as data, one table of field checks per record type: reading a record keeps exactly the known fields,
// checked (a newer writer's extra fields are ignored); a field added to a record's interface needs its entry here.

/** Reports the first rule a record breaks; the reader's throws, adding the file and line. */
type Fail = (rule: string) => never

/** Checks one JSON value found at `path` (e.g. `warnings[0].section`) and returns it typed; `undefined` is a missing field. */
type Check<T> = (value: unknown, path: string, fail: Fail) => T

/** The table for record type `R`: a check for every property but `type` (an optional one may return `undefined`). */
type FieldTable<R> = { readonly [K in Exclude<keyof R, 'type'>]-?: Check<R[K]> }

/** A check that a value holds to `rule`; `read` returns it typed (by default as it is). */
function must<T>(holds: (value: unknown) => boolean, rule: string, read: Check<T> = (value) => value as T): Check<T> {
  return (value, path, fail) => {
    if (!holds(value)) fail(`"${path}" must be ${rule} (got ${shown(value)})`)
    return read(value, path, fail)
  }
}

function optional<T>(check: Check<T>): Check<T | undefined> {
  return (value, path, fail) => (value === undefined ? undefined : check(value, path, fail))
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A surface node, length or byte count. */
const count = must<number>((value) => Number.isSafeInteger(value) && (value as number) >= 0, 'a non-negative integer')
const stepNumber = must<number>((value) => Number.isSafeInteger(value) && (value as number) >= 1, 'a positive integer')
/** `countTokens` may estimate, so fractions are fine. */
const tokenCount = must<number>((value) => Number.isFinite(value) && (value as number) >= 0, 'a non-negative finite number')
const boolean = must<boolean>((value) => typeof value === 'boolean', 'true or false')
const string = must<string>((value) => typeof value === 'string', 'a string')
/** A tool declaration is the provider's JSON, kept whole; only its name is the log's business. */
const tool = must<ToolSchema>((value) => isObject(value) && typeof value.name === 'string', 'an object with a string "name"')

function listOf<T>(item: Check<T>): Check<readonly T[]> {
  return must(Array.isArray, 'an array', (value, path, fail) => {
    for (const [i, each] of (value as unknown[]).entries()) item(each, `${path}[${i}]`, fail)
    return value as T[]
  })
}

function oneOf<T extends string>(...allowed: T[]): Check<T> {
  return must((value) => allowed.includes(value as T), allowed.map((a) => `"${a}"`).join(' or '))
}

/** A nested object read by its own table (known fields only). */
function objectOf<R>(table: FieldTable<R>, rule: string): Check<R> {
  return must(isObject, rule, (value, path, fail) => readFields(table, value as Record<string, unknown>, fail, `${path}.`) as R)
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

const CACHE_BREAK_FIELDS: FieldTable<SessionLogCacheBreak> = {
  cause: oneOf('tools', 'config', 'withheld', 'restored', 'section', 'removed', 'added'),
  section: optional(string),
  layer: optional(string),
  variable: optional(string),
  tools: optional(
    objectOf({ added: strings, removed: strings, changed: strings }, 'an object with "added", "removed" and "changed" name lists'),
  ),
}

/** Also the order `serializeStep` writes the fields in. */
const STEP_FIELDS: FieldTable<SessionLogStepRecord> = {
  step: stepNumber,
  compacted: boolean,
  stablePrefixLength: count,
  stablePrefixBytes: count,
  changedSections: strings,
  firstChangedSection: optional(string),
  // Logs written before step warnings existed lack them.
  warnings: (value, path, fail) => (value === undefined ? NO_WARNINGS : warnings(value, path, fail)),
  toolsChanged: optional(boolean),
  configChanged: optional(boolean),
  reusablePrefixLength: optional(count),
  reusablePrefixBytes: optional(count),
  stablePrefixTokens: optional(tokenCount),
  reusablePrefixTokens: optional(tokenCount),
  promptTokens: optional(tokenCount),
  sections: optional(strings),
  sectionLengths: optional(listOf(count)),
  sectionLayers: optional(listOf(must((value) => value === null || typeof value === 'string', 'a string or null'))),
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
  'request/header': { config: must(isObject, 'an object'), tools: listOf(tool), reason: string },
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
function readFields(table: Record<string, Check<unknown>>, record: Record<string, unknown>, fail: Fail, prefix = ''): object {
  const out: Record<string, unknown> = {}
  for (const [key, check] of Object.entries(table)) {
    const value = check(record[key], prefix + key, fail)
    if (value !== undefined) out[key] = value
  }
  return out
}

/** A new record of the known fields of one parsed JSON line, checked; calls `fail` (which throws) with the first rule broken. */
export function readRecord(value: unknown, fail: Fail): SessionLogRecord {
  if (!isObject(value)) return fail(`expected a JSON object with a "type" (got ${shown(value)})`)
  const type = value.type
  if (typeof type !== 'string' || !Object.hasOwn(RECORD_FIELDS, type)) {
    return fail(`unknown record type ${shown(type)}; known types: ${Object.keys(RECORD_FIELDS).join(', ')}`)
  }
  const failInRecord: Fail = (rule) => fail(`a "${type}" record's ${rule}`)
  return { type, ...readFields(RECORD_FIELDS[type as SessionLogRecord['type']], value, failInRecord) } as SessionLogRecord
}

/** A short JSON rendering of a bad value for an error message; never throws. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing'
  // A writer's record may hold NaN, Infinity or a bigint, which JSON shows as null or cannot show.
  if (typeof value === 'number' || typeof value === 'bigint') return `${value}${typeof value === 'bigint' ? 'n' : ''}`
  let json = 'a value too deeply nested or cyclic to show'
  try {
    json = (JSON.stringify(value) as string | undefined) ?? typeof value
  } catch {
    // A RangeError from nesting too deep for JSON.stringify (JSON.parse reads any depth), or a cycle in a writer's record.
  }
  return json.length > 60 ? `${json.slice(0, 57)}...` : json
}
