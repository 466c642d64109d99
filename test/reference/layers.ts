import type { ReadonlySignal } from '@preact/signals-core'
import { scopeChainOf } from '../../src/scope/parent-chain.js'
import type { ScopeKey } from '../../src/scope/scope-key.js'
import type { AssembleContext, TextSource, ToolProvider, VariableSource } from '../../src/assembly/types.js'

/** A registered section, copied at registration so later edits of the caller's object do nothing. */
export interface SectionEntry {
  readonly name: string
  readonly order: number
  readonly text: TextSource
  readonly interpolate: boolean
  readonly complete: boolean
  /** `required: true` (SPEC §5): restored after the assemble waterfall. */
  readonly required: boolean
}

/** A registered runtime context, copied at registration. */
export interface ContextEntry {
  readonly name: string
  readonly order: number
  readonly text: TextSource
  readonly interpolate: boolean
  readonly required: boolean
}

/** A registered prompt variable. */
export interface VariableEntry {
  readonly name: string
  readonly value: VariableSource
}

/** A registered tool provider; the wrapper keeps equal providers independent registrations. */
export interface ToolEntry {
  readonly provider: ToolProvider
}

/**
 * Everything one layer (the global one or one scope's) holds, in plain
 * insertion-ordered collections. Nothing here is reactive: the oracle reads
 * it from scratch on every call.
 */
export interface ReferenceLayer {
  readonly sections: Map<string, SectionEntry>
  readonly contexts: Map<string, ContextEntry>
  readonly variables: Map<string, VariableEntry>
  readonly tools: Set<ToolEntry>
  readonly suppressors: Set<object>
}

function createLayer(): ReferenceLayer {
  return {
    sections: new Map(),
    contexts: new Map(),
    variables: new Map(),
    tools: new Set(),
    suppressors: new Set(),
  }
}

/**
 * The global layer plus one layer per scope key. Layers are created on first
 * registration and never reclaimed (an empty layer contributes nothing, and
 * the WeakMap lets an unreachable key take its layer with it).
 */
export class ReferenceLayers {
  readonly global: ReferenceLayer = createLayer()
  readonly #scoped = new WeakMap<ScopeKey, ReferenceLayer>()

  /** The exact layer of `scope` (the global layer for `undefined`), created when missing. */
  layerOf(scope: ScopeKey | undefined): ReferenceLayer {
    if (scope === undefined) return this.global
    let layer = this.#scoped.get(scope)
    if (layer === undefined) this.#scoped.set(scope, (layer = createLayer()))
    return layer
  }

  /**
   * The layers visible from `scope`, farthest first: the global layer, then
   * the chain from the farthest ancestor down to `scope` itself. Later layers
   * win a name.
   */
  visible(scope: ScopeKey | undefined): ReferenceLayer[] {
    const layers = [this.global]
    const chain = scopeChainOf(scope)
    for (let i = chain.length - 1; i >= 0; i--) {
      const layer = this.#scoped.get(chain[i]!)
      if (layer !== undefined) layers.push(layer)
    }
    return layers
  }

  /** The named entries visible from `scope`, the nearest layer winning each name. */
  merged<V>(scope: ScopeKey | undefined, pick: (layer: ReferenceLayer) => Map<string, V>): Map<string, V> {
    const merged = new Map<string, V>()
    for (const layer of this.visible(scope)) {
      for (const [name, value] of pick(layer)) merged.set(name, value)
    }
    return merged
  }

  /** Whether any suppressor exists in the global layer or along `scope`'s chain. */
  isSuppressed(scope: ScopeKey | undefined): boolean {
    return this.visible(scope).some((layer) => layer.suppressors.size > 0)
  }

  /** Every tool provider visible from `scope`: global ones first, then farthest to nearest. */
  toolProviders(scope: ScopeKey | undefined): ToolProvider[] {
    const providers: ToolProvider[] = []
    for (const layer of this.visible(scope)) {
      for (const entry of layer.tools) providers.push(entry.provider)
    }
    return providers
  }
}

const SIGNAL_BRAND = Symbol.for('preact-signals')

/** Whether `value` is a @preact/signals-core signal (recognised by the library's brand). */
export function isSignalLike(value: unknown): value is ReadonlySignal<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { brand?: unknown }).brand === SIGNAL_BRAND
  )
}

/** Whether `value` may be registered as a text or variable source. */
export function isSource(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'function' || isSignalLike(value)
}

/** Evaluates a source: a string is itself, a signal its current value, a function its result. */
export function evaluateSource(source: unknown, context: AssembleContext): unknown {
  if (typeof source === 'string') return source
  if (isSignalLike(source)) return source.value
  return (source as (context: AssembleContext) => unknown)(context)
}

/** A short description of a wrong value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** Ascending `order`, ties by code-unit name order (`<`, never `localeCompare`). */
export function byOrderThenName(
  a: { readonly order: number; readonly name: string },
  b: { readonly order: number; readonly name: string },
): number {
  if (a.order < b.order) return -1
  if (a.order > b.order) return 1
  if (a.name < b.name) return -1
  if (a.name > b.name) return 1
  return 0
}

/** Code-unit string order for `Array.prototype.sort`. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
