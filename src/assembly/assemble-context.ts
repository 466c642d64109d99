import type { ScopeKey } from '../scope/scope-key.js'
import type { AssembleContext } from './types.js'

/** The context `assembleContextFor` builds: the agent is both the scope key and `context.agent`. */
export interface AgentAssembleContext<A extends ScopeKey = ScopeKey> extends AssembleContext {
  /** The agent the assembly is for, typed as the caller passed it. */
  agent: A
  /** The same object as `agent`: the agent is its own scope key. */
  scope: A
  /** The caller's cancellation, when given. */
  signal: AbortSignal | undefined
}

/**
 * The assemble context for `agent`, as the original harness's helper built
 * it: `{ agent, scope: agent, signal }`. The agent object is the registry's
 * scope key, and many plugins read `context.agent`. Returns a fresh object.
 */
export function assembleContextFor<A extends ScopeKey>(agent: A, signal?: AbortSignal): AgentAssembleContext<A> {
  return { agent, scope: agent, signal }
}
