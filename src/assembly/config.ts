import { TOOL_ORDER_REST } from './orders.js'

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
}

/** The validated configuration with every default applied. */
export interface ResolvedSystemPromptConfig {
  readonly includeHarnessIdentity: boolean
  readonly identity: string
  readonly includeRuntimeContext: boolean
  readonly personaPrefix: string
  readonly personaSuffix: string
  readonly toolOrder: readonly string[] | undefined
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
] as const

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`
}

function toolOrderIssues(value: unknown): Issue[] {
  if (!Array.isArray(value)) {
    return [{ message: `toolOrder must be an array of tool names (got ${describe(value)})`, path: ['toolOrder'] }]
  }
  const issues: Issue[] = []
  const seen = new Set<string>()
  value.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name === '') {
      issues.push({
        message: `toolOrder[${index}] must be a non-empty tool name (got ${describe(name)})`,
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
 * Validates `config` and applies defaults. Returns the issues instead of
 * throwing, in the shape Cordis' Standard Schema hook reports
 * ("invalid config: - … (at toolOrder)"), so bad config fails at load.
 */
export function resolveSystemPromptConfig(
  config: unknown,
): { value: ResolvedSystemPromptConfig; issues?: undefined } | { issues: Issue[] } {
  const input = (config ?? {}) as Record<string, unknown>
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { issues: [{ message: `systemPrompt config must be an object (got ${describe(config)})` }] }
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
    issues.push({ message: `${key} must be a boolean (got ${describe(value)})`, path: [key] })
    return fallback
  }
  const text = (key: (typeof KEYS)[number], fallback: string): string => {
    const value = input[key]
    if (value === undefined) return fallback
    if (typeof value === 'string') return value
    issues.push({ message: `${key} must be a string (got ${describe(value)})`, path: [key] })
    return fallback
  }
  const value: ResolvedSystemPromptConfig = {
    includeHarnessIdentity: flag('includeHarnessIdentity', true),
    identity: text('identity', 'You are an AI agent.'),
    includeRuntimeContext: flag('includeRuntimeContext', true),
    personaPrefix: text('personaPrefix', ''),
    personaSuffix: text('personaSuffix', ''),
    toolOrder: Array.isArray(input.toolOrder) ? Object.freeze([...(input.toolOrder as string[])]) : undefined,
  }
  if (input.toolOrder !== undefined) issues.push(...toolOrderIssues(input.toolOrder))
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
