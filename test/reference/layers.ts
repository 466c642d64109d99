import type { ScopeKey } from '../../src/scope/scope-key.js'
import type { ToolProvider } from '../../src/assembly/types.js'
import type { OrderedEntry, VariableEntry } from './entries.js'
import { chainFrom, type ParentOf } from './scope.js'

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
  readonly scope: ScopeKey | undefined
  readonly sections: Map<string, OrderedEntry>
  readonly contexts: Map<string, OrderedEntry>
  readonly variables: Map<string, VariableEntry>
  readonly tools: Set<ToolEntry>
  readonly suppressors: Set<object>
}

function createLayer(scope: ScopeKey | undefined): ReferenceLayer {
  return { scope, sections: new Map(), contexts: new Map(), variables: new Map(), tools: new Set(), suppressors: new Set() }
}

/**
 * The global layer plus one layer per scope key. Layers are created on first
 * registration and never reclaimed (an empty layer contributes nothing, and
 * the WeakMap lets an unreachable key take its layer with it). The parent
 * links come from the harness (`parentOf`), read afresh on every call.
 */
export class ReferenceLayers {
  readonly global: ReferenceLayer = createLayer(undefined)
  readonly #scoped = new WeakMap<ScopeKey, ReferenceLayer>()

  constructor(readonly parentOf: ParentOf) {}

  /** The exact layer of `scope` (the global layer for `undefined`), created when missing. */
  layerOf(scope: ScopeKey | undefined): ReferenceLayer {
    if (scope === undefined) return this.global
    let layer = this.#scoped.get(scope)
    if (layer === undefined) this.#scoped.set(scope, (layer = createLayer(scope)))
    return layer
  }

  /**
   * The layers visible from `scope`, farthest first: the global layer, then
   * the chain from the farthest ancestor down to `scope` itself. Later layers
   * win a name.
   */
  visible(scope: ScopeKey | undefined): ReferenceLayer[] {
    const layers = [this.global]
    const chain = chainFrom(scope, this.parentOf)
    for (let i = chain.length - 1; i >= 0; i--) {
      const layer = this.#scoped.get(chain[i]!)
      if (layer !== undefined) layers.push(layer)
    }
    return layers
  }

  /**
   * The named entries visible from `scope`, the nearest layer winning each
   * name; a name keeps the position where it first appeared.
   */
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

  /**
   * Every tool provider visible from `scope` (global ones first, then farthest
   * to nearest), labelled by its position in its own layer.
   */
  toolProviders(scope: ScopeKey | undefined): { provider: ToolProvider; layer: ReferenceLayer; index: number }[] {
    const providers: { provider: ToolProvider; layer: ReferenceLayer; index: number }[] = []
    for (const layer of this.visible(scope)) {
      let index = 0
      for (const entry of layer.tools) providers.push({ provider: entry.provider, layer, index: index++ })
    }
    return providers
  }
}
