import type { ScopeKey } from '../scope/scope-key.js'
import type { AssembleContext } from './types.js'

/** The context `assembleContextFor` builds: the agent is both the scope key and `context.agent`. */
export interface AgentAssembleContext<A extends ScopeKey = ScopeKey> extends AssembleContext {
  /** The agent the assembly is for, typed as the caller passed it. */
  agent: A
  /** The same object as `agent`: the agent is its own scope key. */
  scope: A
  signal: AbortSignal | undefined
}

/** A fresh assemble context `{ agent, scope: agent, signal }`: the agent is the scope key, and plugins read `context.agent`. */
export function assembleContextFor<A extends ScopeKey>(agent: A, signal?: AbortSignal): AgentAssembleContext<A> {
  return { agent, scope: agent, signal }
}
