import { describeValue } from './errors.js'
import { CONTEXT_ORDERS, SECTION_ORDERS, TOOL_ORDER_REST } from './orders.js'
import { malformedReference, scanGroups } from './template.js'

/** The two values of config `stabilityGuard`. */
export type StabilityGuard = 'warn' | 'error'

const STABILITY_GUARDS: readonly StabilityGuard[] = ['warn', 'error']

/** Configuration of the `SystemPrompt` service; every key is optional. */
export interface SystemPromptConfig {
  /** Register section `harness:identity` at `HARNESS_IDENTITY` (default `true`). */
  includeHarnessIdentity?: boolean
  /** The identity text (default `'You are an AI agent.'`). */
  identity?: string
  /** `false` registers one global runtime-context suppressor (default `true`). */
  includeRuntimeContext?: boolean
  /** Template of the global `deployment:persona-prefix` section (default `''`). */
  personaPrefix?: string
  /** Template of the global `deployment:persona-suffix` section (default `''`). */
  personaSuffix?: string
  /** Model-facing tool order with `TOOL_ORDER_REST` exactly once; absent means lexicographic. */
  toolOrder?: readonly string[]
  /** A deployment's own named section bands for `getSectionOrder` (not a built-in name; finite). */
  sectionOrders?: Readonly<Record<string, number>>
  /** A deployment's own named context bands for `getContextOrder` (not a built-in name; finite). */
  contextOrders?: Readonly<Record<string, number>>
  /**
   * What a section referencing a `stability: 'volatile'` variable (and not itself volatile) does:
   * `'warn'` (default) lets the step surface warn; `'error'` makes rendering it fail (SPEC §5).
   */
  stabilityGuard?: StabilityGuard
  /**
   * How many scopes keep their render state (what makes an unchanged step free): assembling one more
   * releases the least recently assembled scope's, whose next step renders from scratch (an equal
   * prompt, a new object). A positive integer or `Infinity` (never release); default 1000.
   */
  renderCacheScopes?: number
}

/** The validated configuration with every default applied; `sectionOrders`/`contextOrders` hold only configured bands. */
export type ResolvedSystemPromptConfig = Readonly<Required<Omit<SystemPromptConfig, 'toolOrder'>>> & {
  readonly toolOrder: readonly string[] | undefined
}

type Issue = { readonly message: string; readonly path?: readonly PropertyKey[] }

function toolOrderIssues(value: unknown): Issue[] {
  if (!Array.isArray(value)) {
    return [{ message: `toolOrder must be an array of tool names (got ${describeValue(value)})`, path: ['toolOrder'] }]
  }
  const issues: Issue[] = []
  const seen = new Set<string>()
  value.forEach((name: unknown, index) => {
    const path = ['toolOrder', index]
    if (typeof name !== 'string' || name === '') {
      issues.push({ message: `toolOrder[${index}] must be a non-empty tool name (got ${describeValue(name)})`, path })
    } else if (seen.has(name)) {
      issues.push({ message: `toolOrder lists "${name}" more than once; keep one position per tool`, path })
    } else seen.add(name)
  })
  if (!seen.has(TOOL_ORDER_REST) && issues.length === 0) {
    const message = `toolOrder must list "${TOOL_ORDER_REST}" exactly once (it is missing); put it where unlisted tools go`
    issues.push({ message, path: ['toolOrder'] })
  }
  return issues
}

/** The configured bands only, frozen and prototype-free, so the resolved config validates again unchanged. */
function orderTable(key: 'sectionOrders' | 'contextOrders', value: unknown, issues: Issue[]): Readonly<Record<string, number>> {
  const table = Object.create(null) as Record<string, number>
  if (value === undefined) return Object.freeze(table)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ message: `${key} must be a record of band names to orders (got ${describeValue(value)})`, path: [key] })
    return Object.freeze(table)
  }
  const kind = key === 'sectionOrders' ? 'section' : 'context'
  const builtIn: Readonly<Record<string, number>> = key === 'sectionOrders' ? SECTION_ORDERS : CONTEXT_ORDERS
  for (const [name, order] of Object.entries(value)) {
    if (Object.hasOwn(builtIn, name)) {
      const message = `${key} "${name}" is already a ${kind} order band (${builtIn[name]}); pick another name for the deployment's own band`
      issues.push({ message, path: [key, name] })
    } else if (typeof order !== 'number' || !Number.isFinite(order)) {
      issues.push({ message: `${key} "${name}" must be a finite number (got ${describeValue(order)})`, path: [key, name] })
    } else table[name] = order
  }
  return Object.freeze(table)
}

/** Validates `config` and applies defaults; returns the issues (Standard Schema shape) instead of throwing. */
export function resolveSystemPromptConfig(config: unknown): { value: ResolvedSystemPromptConfig; issues?: undefined } | { issues: Issue[] } {
  const input = (config ?? {}) as Record<string, unknown>
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { issues: [{ message: `systemPrompt config must be an object (got ${describeValue(config)})` }] }
  }
  const issues: Issue[] = []
  /** `input[key]`, or `fallback` when it is absent or not `ok` (an issue: "<key> must be <rule> (got …)<remedy>"). */
  const option = <T>(
    key: keyof SystemPromptConfig,
    fallback: T,
    ok = (value: unknown) => typeof value === typeof fallback,
    rule = `a ${typeof fallback}`,
    remedy = '',
  ): T => {
    const value = input[key]
    if (value === undefined) return fallback
    if (ok(value)) return value as T
    issues.push({ message: `${key} must be ${rule} (got ${describeValue(value)})${remedy}`, path: [key] })
    return fallback
  }
  const guards = STABILITY_GUARDS.map((g) => `"${g}"`).join(', ')
  const value: ResolvedSystemPromptConfig = {
    includeHarnessIdentity: option('includeHarnessIdentity', true),
    identity: option('identity', 'You are an AI agent.'),
    includeRuntimeContext: option('includeRuntimeContext', true),
    personaPrefix: option('personaPrefix', ''),
    personaSuffix: option('personaSuffix', ''),
    toolOrder: Array.isArray(input.toolOrder) ? Object.freeze([...(input.toolOrder as string[])]) : undefined,
    sectionOrders: orderTable('sectionOrders', input.sectionOrders, issues),
    contextOrders: orderTable('contextOrders', input.contextOrders, issues),
    stabilityGuard: option<StabilityGuard>('stabilityGuard', 'warn', (v) => STABILITY_GUARDS.includes(v as StabilityGuard), `one of ${guards}`,
      '; "error" makes a volatile variable referenced from a section fail the render'),
    renderCacheScopes: option('renderCacheScopes', 1000, (v) => v === Infinity || (Number.isInteger(v) && (v as number) >= 1),
      'a positive integer or Infinity', '; it is how many scopes keep their render state'),
  }
  const known = Object.keys(value)
  const unknown = Object.keys(input).filter((key) => !known.includes(key))
  issues.unshift(...unknown.map((key) => ({ message: `unknown systemPrompt config key "${key}"; known keys: ${known.join(', ')}`, path: [key] })))
  if (input.toolOrder !== undefined) issues.push(...toolOrderIssues(input.toolOrder))
  // A config text renders as a template, so a malformed reference fails at load, naming the key.
  for (const key of ['identity', 'personaPrefix', 'personaSuffix'] as const) {
    const text = input[key]
    const malformed = typeof text === 'string' ? scanGroups(text).find((group) => group.malformed !== undefined) : undefined
    if (malformed === undefined) continue
    const owner = `systemPrompt config "${key}"`
    const { message } = malformedReference(malformed.malformed!, owner, ' (config texts are always interpolated)')
    issues.push({ message, path: [key] })
  }
  return issues.length > 0 ? { issues } : { value }
}

/** The service's `Config` as a Standard Schema: Cordis rejects a bad config with a `ValidationError` listing every issue. */
export const SystemPromptConfigSchema = {
  /** The Standard Schema v1 interface. */
  '~standard': {
    version: 1 as const,
    vendor: 'promptloom',
    /** Validates a config: the defaulted value, or the issues. */
    validate: resolveSystemPromptConfig,
  },
}
