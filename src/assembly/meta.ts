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
  /** Names of the contexts the registry produced (not a waterfall listener), for `refreshContext`. */
  readonly registeredContexts: ReadonlySet<string>
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
