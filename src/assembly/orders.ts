/** The reserved `toolOrder` entry that stands for every tool the list does not name. */
export const TOOL_ORDER_REST = '<unlisted-tools>'

/** Name of the harness identity section, registered globally at `HARNESS_IDENTITY`. */
export const HARNESS_IDENTITY_SECTION = 'harness:identity'
/** Name of the global deployment persona prefix section (before first-party guidance). */
export const PERSONA_PREFIX_SECTION = 'deployment:persona-prefix'
/** Name of the global deployment persona suffix section (after first-party guidance). */
export const PERSONA_SUFFIX_SECTION = 'deployment:persona-suffix'

/**
 * Centrally owned placements of system-prompt sections. The persona prefix
 * and suffix bracket first-party guidance so the reusable prefix stays
 * byte-identical across agents whose paths or URLs differ (KV-cache reuse).
 */
export const SECTION_ORDERS = Object.freeze({
  /** The harness identity section (`harness:identity`). */
  HARNESS_IDENTITY: -1000,
  /** The deployment persona prefix, before first-party guidance. */
  DEPLOYMENT_PERSONA_PREFIX: 0,
  /** Planning policy. */
  PLAN_POLICY: 500,
  /** Guidance on using tools. */
  TOOL_GUIDANCE: 1000,
  /** The generated tool SDK. */
  TOOLS_SDK: 5000,
  /** Structured-output guidance. */
  STRUCTURED_OUTPUT: 9900,
  /** Where the harness checkout lives (environment suffix). */
  HARNESS_SOURCE: 10000,
  /** The local web surface (environment suffix). */
  WEB_SURFACE: 10100,
  /** The deployment persona suffix, after first-party guidance. */
  DEPLOYMENT_PERSONA_SUFFIX: 10200,
} as const)

/** Centrally owned placements of runtime contexts. */
export const CONTEXT_ORDERS = Object.freeze({
  /** Sandbox policy context. */
  SANDBOX_POLICY: 110,
  /** Approval policy context. */
  APPROVAL_POLICY: 115,
  /** Sub-agent delegation context. */
  SUBAGENT_DELEGATION: 120,
} as const)

/** A named section placement. */
export type PromptSectionOrderName = keyof typeof SECTION_ORDERS
/** A named runtime-context placement. */
export type PromptContextOrderName = keyof typeof CONTEXT_ORDERS
