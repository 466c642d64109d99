import type { ScopeKey } from '../scope/scope-key.js'
import type { ContextPlan, ScopeView, SectionPlan, VariablePlan } from './view.js'
import type { PromptStats } from './stats.js'

/**
 * What an assembly or preparation remembers about where it came from, held
 * in a weak side table so the result itself stays a plain object (spreading,
 * cloning or serialising it never copies the meta). Renderers use it to reach
 * their scope's render memo; the step surface uses it to name the layer that
 * supplied a section.
 */
export interface AssemblyMeta {
  readonly view: ScopeView
  readonly stats: PromptStats
  /** The effective sections the assembly was built from (absent on a preparation). */
  readonly sections?: SectionPlan
  /** The effective contexts the preparation was built from (labels for render errors). */
  readonly contexts?: ContextPlan
  /** The effective variables the preparation was built from. */
  readonly variables?: VariablePlan
}

// Held beside the result rather than on it: the result stays a plain object
// with no extra (even hidden) property, and the meta goes with it.
const metas = new WeakMap<object, AssemblyMeta>()

/** Attaches `meta` to `target` and returns `target`. */
export function withMeta<T extends object>(target: T, meta: AssemblyMeta): T {
  metas.set(target, meta)
  return target
}

/** The meta of an object built by `prepare`/`assemble`, or `undefined` for anything else. */
export function metaOf(target: object): AssemblyMeta | undefined {
  return metas.get(target)
}

/** The scope a result was assembled for (`undefined`: the global view). */
export interface AssembledFor {
  readonly scope: ScopeKey | undefined
}

// Keyed by a `contexts` array the engine itself created for one result (never
// one a listener supplied, which it might share between scopes): a shallow
// spread of the result shares that array, so it still knows its scope. A
// structuredClone or JSON copy does not, and `refreshContext` then uses the
// scope it is given. The key itself never becomes enumerable data (a
// structuredClone of an agent object with methods would throw).
const scopes = new WeakMap<object, AssembledFor>()

/** Records that the engine-made `contexts` array belongs to a result assembled for `scope`. */
export function recordScope(contexts: object, scope: ScopeKey | undefined): void {
  scopes.set(contexts, { scope })
}

/** The scope `result` was assembled for, when it (or the `contexts` array it shares) is known. */
export function assembledFor(result: { readonly contexts: object }): AssembledFor | undefined {
  const meta = metas.get(result)
  if (meta !== undefined) return { scope: meta.view.key }
  return typeof result.contexts === 'object' && result.contexts !== null ? scopes.get(result.contexts) : undefined
}
