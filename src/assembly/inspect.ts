import { untracked } from '@preact/signals-core'
import type { NamedEntries } from '../scope/layer-entries.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { mergeNamed } from '../scope/scoped-layers.js'
import { layerOf, type LayerRef, type PromptLayer } from './entries.js'
import type { ScopeView } from './view.js'

export type { LayerRef } from './entries.js'

/** One effective named entry of a view, with where it came from. */
export interface InspectedEntry {
  readonly name: string
  /** The layer that supplies it: `'global'` or the supplying scope key. */
  readonly layer: LayerRef
  /** The layers whose same-named entries it hides, farthest first. */
  readonly shadows: readonly LayerRef[]
  /** `true` on a section registered with `required: true`, which no assemble listener can remove or change (SPEC §5). */
  readonly required?: true
}

/** One contributing tool provider of a view. */
export interface InspectedTools {
  /** The layer the provider is registered in: `'global'` or its scope key. */
  readonly layer: LayerRef
  /** The provider's position among its layer's providers. */
  readonly index: number
}

/** The effective entries of one view (see `SystemPrompt.inspect`). */
export interface PromptInspection {
  /** Sections in assembly order (order, then code-unit name). */
  readonly sections: readonly InspectedEntry[]
  /** Runtime contexts in assembly order, suppressed or not. */
  readonly contexts: readonly InspectedEntry[]
  /** Variables in merge order. */
  readonly variables: readonly InspectedEntry[]
  /** Contributing tool providers, farthest layer first, in registration order within a layer. */
  readonly tools: readonly InspectedTools[]
}

function shadowsIn<V extends { readonly scope: ScopeKey | undefined }>(
  layers: readonly PromptLayer[],
  pick: (layer: PromptLayer) => NamedEntries<V>,
): Map<string, InspectedEntry> {
  const out = new Map<string, InspectedEntry>()
  for (const [name, { value, shadows }] of mergeNamed(layers, pick)) {
    out.set(name, { name, layer: layerOf(value.scope), shadows: shadows.map((entry) => layerOf(entry.scope)) })
  }
  return out
}

/** Builds the inspection of `view` from its current layers; reads without subscribing. */
export function inspectView(view: ScopeView): PromptInspection {
  return untracked(() => {
    const layers = view.derive('layers')
    const sections = shadowsIn(layers, (layer) => layer.sections)
    const contexts = shadowsIn(layers, (layer) => layer.contexts)
    const variables = shadowsIn(layers, (layer) => layer.variables)
    const tools: InspectedTools[] = []
    for (const layer of layers) {
      layer.tools.forEach((entry, index) => tools.push({ layer: layerOf(entry.scope), index }))
    }
    return {
      sections: view.derive('sections').entries.map((entry) => {
        const inspected = sections.get(entry.name)!
        return entry.required ? { ...inspected, required: true as const } : inspected
      }),
      contexts: view.derive('contexts').entries.map((entry) => contexts.get(entry.name)!),
      variables: [...variables.values()],
      tools,
    }
  })
}
