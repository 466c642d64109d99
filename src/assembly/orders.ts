/** The reserved `toolOrder` entry that stands for every tool the list does not name. */
export const TOOL_ORDER_REST = '<unlisted-tools>'

/** Name of the harness identity section, registered globally at `HARNESS_IDENTITY`. */
export const HARNESS_IDENTITY_SECTION = 'harness:identity'
/** Name of the global deployment persona prefix section (before first-party guidance). */
export const PERSONA_PREFIX_SECTION = 'deployment:persona-prefix'
/** Name of the global deployment persona suffix section (after first-party guidance). */
export const PERSONA_SUFFIX_SECTION = 'deployment:persona-suffix'

/**
 * Centrally owned placements of system-prompt sections (`TOOL_*`: that tool's guidance). The persona
 * prefix and suffix bracket first-party guidance so the reusable prefix stays byte-identical across
 * agents whose paths or URLs differ (KV-cache reuse).
 */
export const SECTION_ORDERS = Object.freeze({
  HARNESS_IDENTITY: -1000,
  DEPLOYMENT_PERSONA_PREFIX: 0,
  PLAN_POLICY: 500,
  TEAM_POLICY: 600,
  /** Programmatic-tool-calling-only guidance. */
  PTC_ONLY: 800,
  FILE_REFERENCE: 900,
  TOOL_GUIDANCE: 1000,
  TOOL_BASH: 1000,
  TOOL_PWSH: 1010,
  TOOL_READ: 1100,
  TOOL_WRITE: 1200,
  TOOL_EDIT: 1300,
  TOOL_GLOB: 1400,
  TOOL_GREP: 1500,
  TOOL_JOBS: 1600,
  TOOL_PTY: 1700,
  TOOL_WEB_SEARCH: 2000,
  TOOL_WEB_FETCH: 2100,
  TOOL_LSP: 2200,
  TOOL_SESSION_QUERY: 2300,
  TOOL_GOAL: 2400,
  TOOL_CORDIS: 2500,
  TOOL_WORKFLOW: 2600,
  TOOL_RALPH: 2700,
  TOOL_SUBAGENT: 2800,
  TOOL_REPORT: 2900,
  /** The generated tool SDK. */
  TOOLS_SDK: 5000,
  DELIVERABLE_FILE_REFERENCES: 9000,
  STRUCTURED_OUTPUT: 9900,
  /** Where the harness checkout lives (environment suffix). */
  HARNESS_SOURCE: 10000,
  /** The local web surface (environment suffix). */
  WEB_SURFACE: 10100,
  DEPLOYMENT_PERSONA_SUFFIX: 10200,
} as const)

/** Centrally owned placements of runtime contexts. */
export const CONTEXT_ORDERS = Object.freeze({
  SANDBOX_POLICY: 110,
  APPROVAL_POLICY: 115,
  SUBAGENT_DELEGATION: 120,
} as const)

/** A built-in section placement (config `sectionOrders` adds a deployment's own names). */
export type PromptSectionOrderName = keyof typeof SECTION_ORDERS
/** A built-in runtime-context placement (config `contextOrders` adds a deployment's own names). */
export type PromptContextOrderName = keyof typeof CONTEXT_ORDERS

type Bands = Readonly<Record<string, number>>

/** A band's order: a built-in one, else a configured one; a `TypeError` listing both for any other name. */
export function orderOf(kind: 'section' | 'context', name: string, builtIn: Bands, configured: Bands): number {
  if (Object.hasOwn(builtIn, name)) return builtIn[name]!
  if (Object.hasOwn(configured, name)) return configured[name]!
  const known = [...Object.keys(builtIn), ...Object.keys(configured)].join(', ')
  throw new TypeError(`unknown ${kind} order "${String(name)}"; known: ${known}`)
}
