import { describe } from './entries.js'
import { REFERENCE_CONTEXT_BANDS, REFERENCE_SECTION_BANDS } from './orders.js'
import { referenceCheckTemplate } from './render.js'
import type { ParentOf } from './scope.js'
import { referenceValidateToolOrder } from './tools.js'

/** Config of the reference engine: the production `SystemPrompt`'s keys and defaults, plus two of its own. */
export interface ReferenceSystemPromptConfig {
  readonly includeHarnessIdentity?: boolean
  readonly identity?: string
  readonly includeRuntimeContext?: boolean
  readonly personaPrefix?: string
  readonly personaSuffix?: string
  readonly toolOrder?: readonly string[]
  readonly sectionOrders?: Readonly<Record<string, number>>
  readonly contextOrders?: Readonly<Record<string, number>>
  readonly stabilityGuard?: 'warn' | 'error'
  /**
   * Emit `system-prompt/change` on every registration and disposal, as the
   * original harness does (default `false`, so tests that load both engines in
   * one app hear only the production engine's events). The benchmark turns it on.
   */
  readonly emitChanges?: boolean
  /**
   * The scope parent links, as the harness keeps them (default: no parents).
   * The oracle does not read promptloom's own parent relation, so a test can
   * hand it an independent model of the links.
   */
  readonly parentOf?: ParentOf
}

/** The config with every default applied. */
export interface ResolvedReferenceConfig {
  readonly includeHarnessIdentity: boolean
  readonly identity: string
  readonly includeRuntimeContext: boolean
  readonly personaPrefix: string
  readonly personaSuffix: string
  readonly toolOrder: readonly string[] | undefined
  readonly sectionOrders: Readonly<Record<string, number>>
  readonly contextOrders: Readonly<Record<string, number>>
  readonly emitChanges: boolean
  readonly parentOf: ParentOf
}

function option<T>(config: Record<string, unknown>, key: string, type: 'boolean' | 'string', fallback: T): T {
  const value = config[key]
  if (value === undefined) return fallback
  if (typeof value !== type) {
    throw new TypeError(`config "${key}" must be a ${type} (got ${describe(value)})`)
  }
  return value as T
}

// A template key must be well-formed at load; its names can only be checked
// at render time, when the variables exist.
function template(config: Record<string, unknown>, key: string, fallback: string): string {
  const text = option(config, key, 'string', fallback)
  referenceCheckTemplate(text, `referencePrompt config "${key}"`)
  return text
}

function bands(config: Record<string, unknown>, key: string, builtIn: Readonly<Record<string, number>>): Record<string, number> {
  const value = config[key]
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`config "${key}" must be a record of band names to orders (got ${describe(value)})`)
  }
  const out: Record<string, number> = {}
  for (const [name, order] of Object.entries(value)) {
    if (Object.hasOwn(builtIn, name)) throw new TypeError(`config ${key} "${name}" is already a built-in band; pick another name`)
    if (typeof order !== 'number' || !Number.isFinite(order)) {
      throw new TypeError(`config ${key} "${name}" must be a finite number (got ${describe(order)})`)
    }
    out[name] = order
  }
  return out
}

/** Applies defaults and validates every key; throws `TypeError` on a bad value. */
export function resolveReferenceConfig(config: unknown): ResolvedReferenceConfig {
  if (config === undefined || config === null) config = {}
  if (typeof config !== 'object') {
    throw new TypeError(`referencePrompt config must be an object (got ${describe(config)})`)
  }
  const raw = config as Record<string, unknown>
  const parentOf = raw.parentOf ?? (() => undefined)
  if (typeof parentOf !== 'function') throw new TypeError(`config "parentOf" must be a function (got ${describe(parentOf)})`)
  return {
    includeHarnessIdentity: option(raw, 'includeHarnessIdentity', 'boolean', true),
    identity: template(raw, 'identity', 'You are an AI agent.'),
    includeRuntimeContext: option(raw, 'includeRuntimeContext', 'boolean', true),
    personaPrefix: template(raw, 'personaPrefix', ''),
    personaSuffix: template(raw, 'personaSuffix', ''),
    toolOrder: raw.toolOrder === undefined ? undefined : referenceValidateToolOrder(raw.toolOrder),
    sectionOrders: bands(raw, 'sectionOrders', REFERENCE_SECTION_BANDS),
    contextOrders: bands(raw, 'contextOrders', REFERENCE_CONTEXT_BANDS),
    emitChanges: option(raw, 'emitChanges', 'boolean', false),
    parentOf: parentOf as ParentOf,
  }
}
