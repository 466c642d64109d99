import { describe } from './layers.js'
import { referenceValidateToolOrder } from './tools.js'

/** Config of the reference engine: the same keys and defaults as the production `SystemPrompt`. */
export interface ReferenceSystemPromptConfig {
  readonly includeHarnessIdentity?: boolean
  readonly identity?: string
  readonly includeRuntimeContext?: boolean
  readonly personaPrefix?: string
  readonly personaSuffix?: string
  readonly toolOrder?: readonly string[]
  /**
   * Emit `system-prompt/change` on every registration and disposal, as the
   * original harness does (default `false`, so tests that load both engines in
   * one app hear only the production engine's events). The benchmark turns it on.
   */
  readonly emitChanges?: boolean
}

/** The config with every default applied. */
export interface ResolvedReferenceConfig {
  readonly includeHarnessIdentity: boolean
  readonly identity: string
  readonly includeRuntimeContext: boolean
  readonly personaPrefix: string
  readonly personaSuffix: string
  readonly toolOrder: readonly string[] | undefined
  readonly emitChanges: boolean
}

function option<T>(config: Record<string, unknown>, key: string, type: 'boolean' | 'string', fallback: T): T {
  const value = config[key]
  if (value === undefined) return fallback
  if (typeof value !== type) {
    throw new TypeError(`config "${key}" must be a ${type} (got ${describe(value)})`)
  }
  return value as T
}

/** Applies defaults and validates every key; throws `TypeError` on a bad value. */
export function resolveReferenceConfig(config: unknown): ResolvedReferenceConfig {
  if (config === undefined || config === null) config = {}
  if (typeof config !== 'object') {
    throw new TypeError(`referencePrompt config must be an object (got ${describe(config)})`)
  }
  const raw = config as Record<string, unknown>
  return {
    includeHarnessIdentity: option(raw, 'includeHarnessIdentity', 'boolean', true),
    identity: option(raw, 'identity', 'string', 'You are an AI agent.'),
    includeRuntimeContext: option(raw, 'includeRuntimeContext', 'boolean', true),
    personaPrefix: option(raw, 'personaPrefix', 'string', ''),
    personaSuffix: option(raw, 'personaSuffix', 'string', ''),
    toolOrder: raw.toolOrder === undefined ? undefined : referenceValidateToolOrder(raw.toolOrder),
    emitChanges: option(raw, 'emitChanges', 'boolean', false),
  }
}
