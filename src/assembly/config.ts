import { describeValue } from './errors.js'
import { CONTEXT_ORDERS, SECTION_ORDERS, TOOL_ORDER_REST } from './orders.js'
import { STABILITY_GUARDS, type StabilityGuard } from './stability-hazard.js'
import { compileTemplate } from './template.js'

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
   * What a section that references a `stability: 'volatile'` variable (and is
   * not itself volatile) does: `'warn'` (default) lets the step surface warn;
   * `'error'` makes rendering it fail (SPEC §5).
   */
  stabilityGuard?: StabilityGuard
  /**
   * How many scopes keep their render state (the render memos and last
   * `RenderedPrompt` that make an unchanged step free): assembling a scope
   * beyond it releases the least recently assembled scope's, which then
   * renders from scratch on its next step (an equal prompt, a new object).
   * A positive integer or `Infinity` (never release); default 1000.
   */
  renderCacheScopes?: number
}

/** The validated configuration with every default applied. */
export interface ResolvedSystemPromptConfig {
  readonly includeHarnessIdentity: boolean
  readonly identity: string
  readonly includeRuntimeContext: boolean
  readonly personaPrefix: string
  readonly personaSuffix: string
  readonly toolOrder: readonly string[] | undefined
  /** The configured section bands, without the built-in ones (a frozen, prototype-free table). */
  readonly sectionOrders: Readonly<Record<string, number>>
  /** The configured context bands, without the built-in ones (a frozen, prototype-free table). */
  readonly contextOrders: Readonly<Record<string, number>>
  readonly stabilityGuard: StabilityGuard
  readonly renderCacheScopes: number
}

interface Issue {
  readonly message: string
  readonly path?: readonly PropertyKey[]
}

const KEYS = [
  'includeHarnessIdentity',
  'identity',
  'includeRuntimeContext',
  'personaPrefix',
  'personaSuffix',
  'toolOrder',
  'sectionOrders',
  'contextOrders',
  'stabilityGuard',
  'renderCacheScopes',
] as const


function toolOrderIssues(value: unknown): Issue[] {
  if (!Array.isArray(value)) {
    return [{ message: `toolOrder must be an array of tool names (got ${describeValue(value)})`, path: ['toolOrder'] }]
  }
  const issues: Issue[] = []
  const seen = new Set<string>()
  value.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name === '') {
      issues.push({
        message: `toolOrder[${index}] must be a non-empty tool name (got ${describeValue(name)})`,
        path: ['toolOrder', index],
      })
    } else if (seen.has(name)) {
      issues.push({
        message: `toolOrder lists "${name}" more than once; keep one position per tool`,
        path: ['toolOrder', index],
      })
    } else seen.add(name)
  })
  if (!seen.has(TOOL_ORDER_REST) && issues.length === 0) {
    issues.push({
      message: `toolOrder must list "${TOOL_ORDER_REST}" exactly once (it is missing); put it where unlisted tools go`,
      path: ['toolOrder'],
    })
  }
  return issues
}

/**
 * The configured bands as a frozen table without a prototype (so
 * `constructor` is no band); a name that is already a built-in band, or a
 * non-finite order, is an issue. The built-in bands stay out of it, so the
 * resolved config validates again unchanged (Cordis validates, then the
 * constructor resolves what it got).
 */
function orderTable(
  key: 'sectionOrders' | 'contextOrders',
  builtIn: Readonly<Record<string, number>>,
  value: unknown,
  issues: Issue[],
): Readonly<Record<string, number>> {
  const table = Object.create(null) as Record<string, number>
  if (value === undefined) return Object.freeze(table)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ message: `${key} must be a record of band names to orders (got ${describeValue(value)})`, path: [key] })
    return Object.freeze(table)
  }
  const kind = key === 'sectionOrders' ? 'section' : 'context'
  for (const [name, order] of Object.entries(value)) {
    if (Object.hasOwn(builtIn, name)) {
      issues.push({
        message: `${key} "${name}" is already a ${kind} order band (${builtIn[name]}); pick another name for the deployment's own band`,
        path: [key, name],
      })
    } else if (typeof order !== 'number' || !Number.isFinite(order)) {
      issues.push({ message: `${key} "${name}" must be a finite number (got ${describeValue(order)})`, path: [key, name] })
    } else table[name] = order
  }
  return Object.freeze(table)
}

/** The default of config `renderCacheScopes`. */
export const DEFAULT_RENDER_CACHE_SCOPES = 1000

/** `renderCacheScopes`, default `DEFAULT_RENDER_CACHE_SCOPES`; a positive integer or `Infinity`. */
function scopeLimitOf(value: unknown, issues: Issue[]): number {
  if (value === undefined) return DEFAULT_RENDER_CACHE_SCOPES
  if (value === Infinity || (typeof value === 'number' && Number.isInteger(value) && value >= 1)) return value as number
  issues.push({
    message: `renderCacheScopes must be a positive integer or Infinity (got ${describeValue(value)}); it is how many scopes keep their render state`,
    path: ['renderCacheScopes'],
  })
  return DEFAULT_RENDER_CACHE_SCOPES
}

/** `stabilityGuard`, default `'warn'`; anything but the two values is an issue. */
function guardOf(value: unknown, issues: Issue[]): StabilityGuard {
  if (value === undefined) return 'warn'
  if (STABILITY_GUARDS.includes(value as StabilityGuard)) return value as StabilityGuard
  issues.push({
    message: `stabilityGuard must be one of ${STABILITY_GUARDS.map((g) => `"${g}"`).join(', ')} (got ${describeValue(value)}); "error" makes a volatile variable referenced from a section fail the render`,
    path: ['stabilityGuard'],
  })
  return 'warn'
}

/** A config text that renders as a template: a malformed reference fails at load, naming the key. */
function templateIssue(key: string, text: string): Issue | undefined {
  const owner = `systemPrompt config "${key}"`
  try {
    compileTemplate(text, owner)
    return undefined
  } catch (error) {
    // Keep the reference and the key; the template's own remedy mentions
    // `interpolate: false`, which config texts do not have.
    const message = (error as Error).message
    const end = message.lastIndexOf(owner)
    return {
      message: `${end < 0 ? message : message.slice(0, end + owner.length)}; write {{name}} with a lowercase name matching /^[a-z][a-z0-9_]*$/ (config texts are always interpolated)`,
      path: [key],
    }
  }
}

/**
 * Validates `config` and applies defaults. Returns the issues instead of
 * throwing, in the shape Cordis' Standard Schema hook reports
 * ("invalid config: - … (at toolOrder)"), so bad config fails at load.
 */
export function resolveSystemPromptConfig(
  config: unknown,
): { value: ResolvedSystemPromptConfig; issues?: undefined } | { issues: Issue[] } {
  const input = (config ?? {}) as Record<string, unknown>
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { issues: [{ message: `systemPrompt config must be an object (got ${describeValue(config)})` }] }
  }
  const issues: Issue[] = []
  for (const key of Object.keys(input)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      issues.push({ message: `unknown systemPrompt config key "${key}"; known keys: ${KEYS.join(', ')}`, path: [key] })
    }
  }
  const flag = (key: (typeof KEYS)[number], fallback: boolean): boolean => {
    const value = input[key]
    if (value === undefined) return fallback
    if (typeof value === 'boolean') return value
    issues.push({ message: `${key} must be a boolean (got ${describeValue(value)})`, path: [key] })
    return fallback
  }
  const text = (key: (typeof KEYS)[number], fallback: string): string => {
    const value = input[key]
    if (value === undefined) return fallback
    if (typeof value === 'string') return value
    issues.push({ message: `${key} must be a string (got ${describeValue(value)})`, path: [key] })
    return fallback
  }
  const value: ResolvedSystemPromptConfig = {
    includeHarnessIdentity: flag('includeHarnessIdentity', true),
    identity: text('identity', 'You are an AI agent.'),
    includeRuntimeContext: flag('includeRuntimeContext', true),
    personaPrefix: text('personaPrefix', ''),
    personaSuffix: text('personaSuffix', ''),
    toolOrder: Array.isArray(input.toolOrder) ? Object.freeze([...(input.toolOrder as string[])]) : undefined,
    sectionOrders: orderTable('sectionOrders', SECTION_ORDERS, input.sectionOrders, issues),
    contextOrders: orderTable('contextOrders', CONTEXT_ORDERS, input.contextOrders, issues),
    stabilityGuard: guardOf(input.stabilityGuard, issues),
    renderCacheScopes: scopeLimitOf(input.renderCacheScopes, issues),
  }
  if (input.toolOrder !== undefined) issues.push(...toolOrderIssues(input.toolOrder))
  for (const key of ['identity', 'personaPrefix', 'personaSuffix'] as const) {
    const issue = typeof input[key] === 'string' ? templateIssue(key, input[key]) : undefined
    if (issue !== undefined) issues.push(issue)
  }
  return issues.length > 0 ? { issues } : { value }
}

/**
 * The service's `Config` as a Standard Schema, which Cordis 4 runs before
 * constructing the plugin: `ctx.plugin(SystemPrompt, bad)` rejects with a
 * `ValidationError` (a `TypeError`) listing every issue.
 */
export const SystemPromptConfigSchema = {
  /** The Standard Schema v1 interface. */
  '~standard': {
    /** The Standard Schema version. */
    version: 1 as const,
    /** The library that validates. */
    vendor: 'promptloom',
    /** Validates a config: the defaulted value, or the issues. */
    validate: resolveSystemPromptConfig,
  },
}
