export { batch } from '@preact/signals-core'
export { SignalTable } from './signals/signal-table.js'
export { isReadonlySignal } from './signals/is-signal.js'
export { ownedEffect, type EffectOwner } from './signals/owned-effect.js'
export { scopeOf, type ScopeKey, type Scoped } from './scope/scope-key.js'
export {
  bindScopeParent,
  scopeChainOf,
  scopeParentOf,
  type ScopeParentBinding,
} from './scope/parent-chain.js'
export { carrierKeyOf, isScopeCarrier, scopeTarget } from './scope/carrier.js'
export { createScope, type CreateScopeOptions, type Scope } from './scope/create-scope.js'
export { NamedEntries, type Undo } from './scope/named-entries.js'
export { AnonymousEntries } from './scope/anonymous-entries.js'
export { ScopedLayers, type LayerEffectOptions, type ScopeLayer } from './scope/scoped-layers.js'
