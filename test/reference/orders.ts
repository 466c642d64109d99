// The order bands of SPEC §2, written out (not imported): the oracle's getters
// answer from these tables plus a deployment's configured bands.

/** The reserved `toolOrder` entry standing for every tool the list does not name. */
export const REFERENCE_TOOL_ORDER_REST = '<unlisted-tools>'

/** The configured global sections' names. */
export const REFERENCE_IDENTITY_SECTION = 'harness:identity'
export const REFERENCE_PREFIX_SECTION = 'deployment:persona-prefix'
export const REFERENCE_SUFFIX_SECTION = 'deployment:persona-suffix'

/** Section bands, SPEC §2 "Order bands" (the upstream harness's as well). */
export const REFERENCE_SECTION_BANDS: Readonly<Record<string, number>> = Object.freeze({
  HARNESS_IDENTITY: -1000,
  DEPLOYMENT_PERSONA_PREFIX: 0,
  PLAN_POLICY: 500,
  TEAM_POLICY: 600,
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
  TOOLS_SDK: 5000,
  DELIVERABLE_FILE_REFERENCES: 9000,
  STRUCTURED_OUTPUT: 9900,
  HARNESS_SOURCE: 10000,
  WEB_SURFACE: 10100,
  DEPLOYMENT_PERSONA_SUFFIX: 10200,
})

/** Runtime-context bands, SPEC §2 "Order bands". */
export const REFERENCE_CONTEXT_BANDS: Readonly<Record<string, number>> = Object.freeze({
  SANDBOX_POLICY: 110,
  APPROVAL_POLICY: 115,
  SUBAGENT_DELEGATION: 120,
})
