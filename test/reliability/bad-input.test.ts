import { signal } from '@preact/signals-core'
import { describe, expect, test } from 'vitest'
import {
  bindScopeParent,
  createScope,
  renderContextSnapshot,
  renderPrompt,
  scopeChainOf,
  scopeParentOf,
  SystemPrompt,
  TOOL_ORDER_REST,
  type PromptAssembly,
  type ScopeParentBinding,
  type SystemPromptConfig,
} from '../../src/index.js'
import { CONFIG, delta, GLOBAL_TOOLS, observe, world, type World } from './world.js'

// The catalogue of bad input (SPEC §2 "Reliability"): one row per invalid
// call, with the error class and the message fragments it must carry — the
// entry, its kind and, for a scoped entry, `in scope "agent-1"`. Every row is
// run against the seeded world of ./world.ts and must leave the registry, its
// memoized views and the change events exactly as they were.
//
// `arrange` may register a provider made by `w.faulty`: it is healthy for the
// baseline and misbehaves only while `act` runs (with `w.fault` set), so the
// registry state before and after the failed call is the same.

interface Row {
  /** The invalid call, as docs/errors.md lists it. */
  readonly call: string
  /** Registry state the row needs; what it returns is handed to `act`. */
  readonly arrange?: (w: World) => unknown
  readonly act: (w: World, arranged: any) => unknown
  readonly error: typeof Error
  readonly message: readonly string[]
  /** The service config of the row's world (default: world.ts's CONFIG). */
  readonly config?: SystemPromptConfig
}

const sp = (w: World) => w.app.systemPrompt
const a1 = (w: World) => w.scopes.agent1.ctx.systemPrompt
const assembleA1 = (w: World) => sp(w).assemble({ scope: w.keys.agent1 })
const renderA1 = async (w: World) => renderPrompt(await assembleA1(w))
const SCOPED = 'in scope "agent-1"'

const REGISTRATION: Row[] = [
  // order
  { call: 'section() with order NaN', act: (w) => sp(w).section({ name: 'x', order: NaN, text: 'x' }), error: TypeError, message: ['prompt section "x" order must be a finite number (got number NaN)'] },
  { call: 'scoped section() with order Infinity', act: (w) => a1(w).section({ name: 'x', order: Infinity, text: 'x' }), error: TypeError, message: [`prompt section "x" ${SCOPED} order must be a finite number (got number Infinity)`] },
  { call: 'section() with a string order', act: (w) => sp(w).section({ name: 'x', order: '1' as never, text: 'x' }), error: TypeError, message: ['prompt section "x" order must be a finite number (got string "1")'] },
  { call: 'scoped context() with order -Infinity', act: (w) => a1(w).context({ name: 'c', order: -Infinity, text: 'x' }), error: TypeError, message: [`runtime context "c" ${SCOPED} order must be a finite number (got number -Infinity)`] },
  { call: 'context() without an order', act: (w) => sp(w).context({ name: 'c', text: 'x' } as never), error: TypeError, message: ['runtime context "c" order must be a finite number (got undefined)'] },
  // name
  { call: 'section() with an empty name', act: (w) => sp(w).section({ name: '', order: 0, text: 'x' }), error: TypeError, message: ['prompt section name must be a non-empty string (got string "")'] },
  { call: 'scoped section() with a number name', act: (w) => a1(w).section({ name: 42 as never, order: 0, text: 'x' }), error: TypeError, message: [`prompt section name ${SCOPED} must be a non-empty string (got number 42)`] },
  { call: 'scoped context() without a name', act: (w) => a1(w).context({ order: 0, text: 'x' } as never), error: TypeError, message: [`runtime context name ${SCOPED} must be a non-empty string (got undefined)`] },
  // duplicates
  { call: 'section() with a name taken in the global layer', act: (w) => sp(w).section({ name: 'intro', order: 1, text: 'again' }), error: Error, message: ['prompt section "intro" is already registered in the global layer'] },
  { call: 'section() with the identity section’s name', act: (w) => sp(w).section({ name: 'harness:identity', order: 1, text: 'me' }), error: Error, message: ['prompt section "harness:identity" is already registered in the global layer'] },
  { call: 'scoped section() with a name taken in that scope', act: (w) => a1(w).section({ name: 'task', order: 1, text: 'again' }), error: Error, message: [`prompt section "task" is already registered ${SCOPED}`] },
  { call: 'scoped context() with a name taken in that scope', act: (w) => a1(w).context({ name: 'job', order: 1, text: 'again' }), error: Error, message: [`runtime context "job" is already registered ${SCOPED}`] },
  { call: 'context() with a name taken in the global layer', act: (w) => sp(w).context({ name: 'env', order: 1, text: 'again' }), error: Error, message: ['runtime context "env" is already registered in the global layer'] },
  { call: 'variable() with a name taken in the global layer', act: (w) => sp(w).variable('user', 'Bob'), error: Error, message: ['prompt variable "user" is already registered in the global layer'] },
  { call: 'scoped variable() with a name taken in that scope', act: (w) => a1(w).variable('cwd', '/b'), error: Error, message: [`prompt variable "cwd" is already registered ${SCOPED}`] },
  // variable names
  { call: 'variable() with an uppercase name', act: (w) => sp(w).variable('Cwd', 'x'), error: TypeError, message: ['invalid prompt variable name "Cwd"', '/^[a-z][a-z0-9_]*$/'] },
  { call: 'scoped variable() with a name starting with a digit', act: (w) => a1(w).variable('1cwd', 'x'), error: TypeError, message: [`invalid prompt variable name "1cwd" ${SCOPED}`] },
  { call: 'variable() with an empty name', act: (w) => sp(w).variable('', 'x'), error: TypeError, message: ['invalid prompt variable name ""'] },
  { call: 'variable() with a non-string name', act: (w) => sp(w).variable(7 as never, 'x'), error: TypeError, message: ['invalid prompt variable name number 7'] },
  // texts and values
  { call: 'section() with a number text', act: (w) => sp(w).section({ name: 'x', order: 0, text: 1 as never }), error: TypeError, message: ['prompt section "x" text must be a string, a signal or a function (got number 1)'] },
  { call: 'scoped section() with an object text', act: (w) => a1(w).section({ name: 'x', order: 0, text: { text: 'x' } as never }), error: TypeError, message: [`prompt section "x" ${SCOPED} text must be a string, a signal or a function (got an object)`] },
  { call: 'scoped context() with a null text', act: (w) => a1(w).context({ name: 'c', order: 0, text: null as never }), error: TypeError, message: [`runtime context "c" ${SCOPED} text must be a string, a signal or a function (got null)`] },
  { call: 'variable() with an array value', act: (w) => sp(w).variable('v', ['x'] as never), error: TypeError, message: ['prompt variable "v" value must be a string, a signal or a function (got an array)'] },
  { call: 'scoped variable() with an undefined value', act: (w) => a1(w).variable('v', undefined as never), error: TypeError, message: [`prompt variable "v" ${SCOPED} value must be a string, a signal or a function (got undefined)`] },
  { call: 'tools() with a plain result instead of a provider', act: (w) => sp(w).tools({ schemas: [] } as never), error: TypeError, message: ['tool provider must be a function or a signal', '(got an object)'] },
  { call: 'scoped tools() with null', act: (w) => a1(w).tools(null as never), error: TypeError, message: [`tool provider ${SCOPED} must be a function or a signal`, '(got null)'] },
  // options
  { call: 'section() with a non-boolean interpolate', act: (w) => sp(w).section({ name: 'x', order: 0, text: 'x', interpolate: 'no' as never }), error: TypeError, message: ['prompt section "x" option "interpolate" must be a boolean (got string "no")'] },
  { call: 'scoped section() with a non-boolean complete', act: (w) => a1(w).section({ name: 'x', order: 0, text: 'x', complete: 1 as never }), error: TypeError, message: [`prompt section "x" ${SCOPED} option "complete" must be a boolean (got number 1)`] },
  { call: 'section() with a non-boolean required', act: (w) => sp(w).section({ name: 'x', order: 0, text: 'x', required: 1 as never }), error: TypeError, message: ['prompt section "x" option "required" must be a boolean (got number 1)'] },
  { call: 'scoped section() with a non-boolean cacheBreakpoint', act: (w) => a1(w).section({ name: 'x', order: 0, text: 'x', cacheBreakpoint: 'yes' as never }), error: TypeError, message: [`prompt section "x" ${SCOPED} option "cacheBreakpoint" must be a boolean (got string "yes")`] },
  { call: 'section() with a non-finite priority', act: (w) => sp(w).section({ name: 'x', order: 0, text: 'x', priority: NaN }), error: TypeError, message: ['prompt section "x" priority must be a finite number (got number NaN)'] },
  { call: 'scoped context() with a non-boolean required', act: (w) => a1(w).context({ name: 'c', order: 0, text: 'x', required: 'yes' as never }), error: TypeError, message: [`runtime context "c" ${SCOPED} option "required" must be a boolean`] },
  { call: 'variable() with an unknown stability', act: (w) => sp(w).variable('v', 'x', { stability: 'hourly' as never }), error: TypeError, message: ['prompt variable "v" stability must be one of "static", "session", "volatile" (got string "hourly")'] },
  // order bands
  { call: 'getSectionOrder() with an unknown name', act: (w) => sp(w).getSectionOrder('NOPE'), error: TypeError, message: ['unknown section order "NOPE"; known: HARNESS_IDENTITY, '] },
  { call: 'getContextOrder() with a section band', act: (w) => sp(w).getContextOrder('TOOLS_SDK'), error: TypeError, message: ['unknown context order "TOOLS_SDK"; known: SANDBOX_POLICY, APPROVAL_POLICY, SUBAGENT_DELEGATION'] },
]

const PROVIDERS: Row[] = [
  { call: 'a section text provider returning a number', arrange: (w) => a1(w).section({ name: 'late', order: 2000, text: w.faulty('ok', () => 7) }), act: assembleA1, error: TypeError, message: [`prompt section "late" ${SCOPED} text provider returned number 7; it must be a string`] },
  { call: 'a section text provider returning undefined', arrange: (w) => sp(w).section({ name: 'late', order: 2000, text: w.faulty('ok', () => undefined) }), act: assembleA1, error: TypeError, message: ['prompt section "late" text provider returned undefined; it must be a string'] },
  { call: 'a section text signal holding a number', arrange: (w) => w.scopes.agent2.ctx.systemPrompt.section({ name: 'late', order: 2000, text: signal(5) as never }), act: (w) => sp(w).assemble({ scope: w.keys.agent2 }), error: TypeError, message: ['prompt section "late" in scope "agent-2" text signal holds number 5; it must be a string'] },
  { call: 'a context text provider returning an object', arrange: (w) => a1(w).context({ name: 'disk', order: 130, text: w.faulty('ok', () => ({})) }), act: assembleA1, error: TypeError, message: [`runtime context "disk" ${SCOPED} text provider returned an object; it must be a string`] },
  { call: 'a variable provider returning a number', arrange: (w) => a1(w).variable('branch', w.faulty<string | undefined>('main', () => 3)), act: assembleA1, error: TypeError, message: [`prompt variable "branch" ${SCOPED} provider returned number 3; it must be a string or undefined`] },
  { call: 'a variable provider returning null', arrange: (w) => sp(w).variable('branch', w.faulty<string | undefined>('main', () => null)), act: assembleA1, error: TypeError, message: ['prompt variable "branch" provider returned null; it must be a string or undefined'] },
  { call: 'a tool provider returning a non-object', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => 'bash')), act: assembleA1, error: TypeError, message: [`tool provider #1 ${SCOPED} must return { schemas: ToolSchema[], knownNames? } (got string "bash")`] },
  { call: 'a tool provider returning schemas that are not an array', arrange: (w) => sp(w).tools(w.faulty({ schemas: [] }, () => ({ schemas: {} }))), act: assembleA1, error: TypeError, message: ['tool provider #2 must return { schemas: ToolSchema[], knownNames? } (got an object)'] },
  { call: 'a tool provider returning a schema without a name', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => ({ schemas: [{ description: 'x', parameters: {} }] }))), act: assembleA1, error: TypeError, message: [`tool provider #1 ${SCOPED} returned a tool schema without a string name (got an object)`] },
  { call: 'a tool provider returning the reserved rest name', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => ({ schemas: [{ name: TOOL_ORDER_REST, description: '', parameters: {} }] }))), act: assembleA1, error: Error, message: [`tool provider #1 ${SCOPED} returned a tool named "${TOOL_ORDER_REST}", which is reserved`] },
  { call: 'a tool provider returning knownNames that is not a name array', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => ({ schemas: [], knownNames: 'read' }))), act: assembleA1, error: TypeError, message: [`tool provider #1 ${SCOPED} returned knownNames that is not an array of tool names (got string "read")`] },
  { call: 'two tool providers returning the same tool name', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => GLOBAL_TOOLS)), act: assembleA1, error: Error, message: ['tool "bash" is provided more than once (by tool provider #1 and tool provider #1 in scope "agent-1")'] },
  { call: 'a tool provider returning a schema that cannot be cloned', arrange: (w) => a1(w).tools(w.faulty({ schemas: [] }, () => ({ schemas: [{ name: 'fn', description: '', parameters: { f: () => 1 } }] }))), act: assembleA1, error: TypeError, message: [`tool "fn" from tool provider #1 ${SCOPED} cannot be detached`] },
  { call: 'tool providers whose knownNames miss a toolOrder name', arrange: (w) => { w.faultTools = { schemas: [GLOBAL_TOOLS.schemas[0]] } }, act: (w) => sp(w).assemble({ scope: w.keys.agent2 }), error: Error, message: ['toolOrder lists unregistered tool "read"; known tools: bash'] },
  { call: 'two effective complete sections', arrange: async (w) => { a1(w).section({ name: 'all', order: 0, text: 'A', complete: true }); const sub = { name: 'agent-3' }; await w.app.inject(['systemPrompt'], (ctx) => void createScope(ctx, sub, { parent: w.keys.agent1 }).ctx.systemPrompt.section({ name: 'whole', order: 0, text: 'W', complete: true })); return sub }, act: (w, sub) => sp(w).assemble({ scope: sub }), error: Error, message: ['multiple complete prompt sections in scope "agent-3": prompt section "all" in scope "agent-1", prompt section "whole" in scope "agent-3"'] },
  { call: 'assemble() with a null context', act: (w) => sp(w).assemble(null as never), error: TypeError, message: ['assemble context must be an object (got null)'] },
  { call: 'assemble() with a string context', act: (w) => sp(w).assemble('agent-1' as never), error: TypeError, message: ['assemble context must be an object (got string "agent-1")'] },
  { call: 'prepare() with a null context', act: (w) => sp(w).prepare(null as never), error: TypeError, message: ['assemble context must be an object (got null)'] },
  { call: 'refreshContext() with a null context', act: async (w) => sp(w).refreshContext(await assembleA1(w), null as never), error: TypeError, message: ['assemble context must be an object (got null)'] },
  { call: 'assemble() with a non-object scope', act: (w) => sp(w).assemble({ scope: 'agent-1' as never }), error: TypeError, message: ['assemble context "scope" must be a scope key object (got string "agent-1")'] },
  { call: 'a prepare listener resolving to undefined', arrange: (w) => w.app.on('system-prompt/prepare', async (p, _c, next) => (w.fault ? (undefined as never) : next())), act: assembleA1, error: Error, message: ['a "system-prompt/prepare" listener resolved to undefined'] },
  { call: 'an assemble listener resolving to a presentation without sections', arrange: (w) => w.app.on('system-prompt/assemble', async (p, _c, next) => (w.fault ? ({ contexts: [], variables: {} } as never) : next())), act: assembleA1, error: Error, message: ['a "system-prompt/assemble" listener resolved to an object without a sections array'] },
  { call: 'an assemble listener returning a null section', arrange: (w) => w.app.on('system-prompt/assemble', async (p, _c, next) => { const result = await next(); return w.fault ? { ...result, sections: [...result.sections, null as never] } : result }), act: (w) => sp(w).assemble(), error: Error, message: ['a "system-prompt/assemble" listener returned sections[', '] = null; every section needs a string name and text'] },
  { call: 'a prepare listener returning a context without text', arrange: (w) => w.app.on('system-prompt/prepare', async (p, _c, next) => { const result = await next(); return w.fault ? { ...result, contexts: [{ name: 'x' } as never] } : result }), act: assembleA1, error: Error, message: ['a "system-prompt/prepare" listener returned contexts[0] = { name: string "x", text: undefined }; every context needs a string name and text'] },
  { call: 'an assemble listener returning a non-string variable value', arrange: (w) => w.app.on('system-prompt/assemble', async (p, _c, next) => { const result = await next(); return w.fault ? { ...result, variables: { ...result.variables, cwd: { path: '/x' } as never } } : result }), act: assembleA1, error: Error, message: ['a "system-prompt/assemble" listener returned variables.cwd = an object; every variable value must be a string or undefined'] },
  { call: 'assemble() given a preparation with a number variable', act: (w) => sp(w).assemble({}, { variables: { user: 42 }, contexts: [] } as never), error: Error, message: ['assemble() was given a preparation with variables.user = number 42; every variable value must be a string or undefined'] },
  { call: 'assemble() given a null preparation', act: (w) => sp(w).assemble({ scope: w.keys.agent1 }, null as never), error: Error, message: ['assemble() was given a preparation that is null; leave it out, or pass what prepare() resolved to'] },
  { call: 'assemble() given a preparation without a contexts array', act: (w) => sp(w).assemble({}, { variables: {} } as never), error: Error, message: ['assemble() was given a preparation that is an object without a contexts array'] },
  { call: 'assemble() given a preparation whose variables are null', act: (w) => sp(w).assemble({}, { variables: null, contexts: [] } as never), error: Error, message: ['assemble() was given a preparation that is an object without a variables record'] },
  { call: 'assemble() given a preparation with a null context', act: async (w) => sp(w).assemble({ scope: w.keys.agent1 }, { ...(await sp(w).prepare({ scope: w.keys.agent1 })), contexts: [null as never] }), error: Error, message: ['assemble() was given a preparation with contexts[0] = null; every context needs a string name and text'] },
  { call: 'refreshContext() of an agent-1 assembly for scope agent-2', arrange: assembleA1, act: (w, accepted: PromptAssembly) => sp(w).refreshContext(accepted, { scope: w.keys.agent2 }), error: Error, message: ['an accepted result assembled for scope "agent-1" cannot be refreshed for scope "agent-2"', 'pass the scope it was assembled for'] },
]

const TEMPLATES: Row[] = [
  { call: 'renderPrompt() over a malformed reference in a scoped section', arrange: (w) => a1(w).section({ name: 'notes', order: 1500, text: w.faulty('ok', () => 'see {{ cwd }}') }), act: renderA1, error: Error, message: [`malformed prompt variable reference "{{ cwd }}" in prompt section "notes" ${SCOPED}`] },
  { call: 'renderPrompt() over an empty reference in a global section', arrange: (w) => sp(w).section({ name: 'notes', order: 1500, text: w.faulty('ok', () => 'x {{}} y') }), act: renderA1, error: Error, message: ['malformed prompt variable reference "{{}}" in prompt section "notes"'] },
  { call: 'renderPrompt() over a triple-brace reference', arrange: (w) => a1(w).section({ name: 'notes', order: 1500, text: w.faulty('ok', () => '{{{cwd}}}') }), act: renderA1, error: Error, message: [`malformed prompt variable reference "{{{cwd}}" in prompt section "notes" ${SCOPED}`] },
  { call: 'renderPrompt() over an unknown variable', arrange: (w) => a1(w).section({ name: 'notes', order: 1500, text: w.faulty('ok', () => 'in {{branch}}') }), act: renderA1, error: Error, message: [`unknown prompt variable "{{branch}}" in prompt section "notes" ${SCOPED}`, 'registered variables: cwd, user'] },
  { call: 'renderPrompt() over {{constructor}} (own-property lookup)', arrange: (w) => sp(w).section({ name: 'notes', order: 1500, text: w.faulty('ok', () => '{{constructor}}') }), act: renderA1, error: Error, message: ['unknown prompt variable "{{constructor}}" in prompt section "notes"'] },
  { call: 'renderPrompt() over a variable without a value', arrange: (w) => { a1(w).variable('branch', w.faulty<string | undefined>('main', () => undefined)); a1(w).section({ name: 'notes', order: 1500, text: 'on {{branch}}' }) }, act: renderA1, error: Error, message: [`prompt variable "branch" has no value in prompt section "notes" ${SCOPED}`] },
  { call: 'renderPrompt() of a copy whose referenced variable is null', act: async (w) => { const assembly = await assembleA1(w); return renderPrompt({ ...assembly, variables: { ...assembly.variables, cwd: null as never } }) }, error: TypeError, message: ['prompt variable "cwd" is null in prompt section "task"; a variable value must be a string, or undefined for no value'] },
  { call: "renderPrompt() of a section referencing a volatile variable under stabilityGuard 'error'", config: { ...CONFIG, stabilityGuard: 'error' }, arrange: async (w) => { const sub = { name: 'agent-3' }; await w.app.inject(['systemPrompt'], (ctx) => { const sp3 = createScope(ctx, sub, { parent: w.keys.agent1 }).ctx.systemPrompt; sp3.variable('tick', () => 'now', { stability: 'volatile' }); sp3.section({ name: 'clock', order: 1500, text: 'at {{tick}}' }) }); return sub }, act: async (w, sub) => renderPrompt(await sp(w).assemble({ scope: sub })), error: Error, message: ['prompt section "clock" in scope "agent-3" references volatile prompt variable "tick" in scope "agent-3", which config stabilityGuard \'error\' forbids', 'move it into a runtime context', "stability: 'volatile'"] },
  { call: 'diagnostics() with a non-object scope', act: (w) => sp(w).diagnostics('agent-1' as never), error: TypeError, message: ['assemble context "scope" must be a scope key object (got string "agent-1")'] },
  { call: 'diagnostics() with a non-boolean includeUnchecked', act: (w) => sp(w).diagnostics(undefined, { includeUnchecked: 'yes' as never }), error: TypeError, message: ['diagnostics option "includeUnchecked" must be a boolean (got string "yes")'] },
  { call: 'renderContextSnapshot() over a malformed reference in a scoped context', arrange: (w) => a1(w).context({ name: 'disk', order: 130, text: w.faulty('ok', () => 'free {{ x }}') }), act: async (w) => renderContextSnapshot(await assembleA1(w)), error: Error, message: [`malformed prompt variable reference "{{ x }}" in runtime context "disk" ${SCOPED}`] },
]

const CONFIGS: [string, unknown, string][] = [
  ['includeHarnessIdentity that is not a boolean', { includeHarnessIdentity: 'yes' }, 'includeHarnessIdentity must be a boolean (got string "yes")'],
  ['includeRuntimeContext that is not a boolean', { includeRuntimeContext: 0 }, 'includeRuntimeContext must be a boolean (got number 0)'],
  ['identity that is not a string', { identity: 42 }, 'identity must be a string (got number 42)'],
  ['personaPrefix that is not a string', { personaPrefix: null }, 'personaPrefix must be a string (got null)'],
  ['personaSuffix that is not a string', { personaSuffix: ['x'] }, 'personaSuffix must be a string (got an array)'],
  ['toolOrder that is not an array', { toolOrder: 'bash' }, 'toolOrder must be an array of tool names (got string "bash")'],
  ['toolOrder with a non-string entry', { toolOrder: [TOOL_ORDER_REST, 3] }, 'toolOrder[1] must be a non-empty tool name (got number 3)'],
  ['toolOrder naming a tool twice', { toolOrder: ['bash', TOOL_ORDER_REST, 'bash'] }, 'toolOrder lists "bash" more than once'],
  ['toolOrder with the rest entry twice', { toolOrder: [TOOL_ORDER_REST, 'bash', TOOL_ORDER_REST] }, `toolOrder lists "${TOOL_ORDER_REST}" more than once`],
  ['toolOrder without the rest entry', { toolOrder: ['bash'] }, `toolOrder must list "${TOOL_ORDER_REST}" exactly once (it is missing)`],
  ['a malformed reference in personaPrefix', { personaPrefix: 'Team {{ team }}' }, 'malformed prompt variable reference "{{ team }}" in systemPrompt config "personaPrefix"; write {{name}}'],
  ['an empty reference in identity', { identity: 'I am {{}}' }, 'malformed prompt variable reference "{{}}" in systemPrompt config "identity"'],
  ['sectionOrders redefining a built-in band', { sectionOrders: { TOOLS_SDK: 1 } }, 'sectionOrders "TOOLS_SDK" is already a section order band (5000)'],
  ['contextOrders with a non-finite order', { contextOrders: { TICKET: Infinity } }, 'contextOrders "TICKET" must be a finite number (got number Infinity)'],
  ['sectionOrders that is not a record', { sectionOrders: [] }, 'sectionOrders must be a record of band names to orders (got an array)'],
  ['stabilityGuard that is not one of the two modes', { stabilityGuard: 'strict' }, 'stabilityGuard must be one of "warn", "error" (got string "strict")'],
  ['stabilityGuard that is not a string', { stabilityGuard: true }, 'stabilityGuard must be one of "warn", "error" (got boolean true)'],
  ['an unknown config key', { identiy: 'x' }, 'unknown systemPrompt config key "identiy"'],
  ['a config that is not an object', 'bash', 'systemPrompt config must be an object (got string "bash")'],
]

const CONFIG_ROWS: Row[] = CONFIGS.map(([what, config, message]) => ({
  call: `plugin(SystemPrompt, config) with ${what}`,
  act: (w) => w.app.plugin(SystemPrompt, config as SystemPromptConfig),
  error: TypeError,
  message: ['invalid config:', message],
}))

const SCOPES: Row[] = [
  { call: 'bindScopeParent(key, key)', act: (w) => bindScopeParent(w.keys.preset, w.keys.preset), error: Error, message: ['scope "preset" cannot take parent "preset": the link would close a cycle ("preset" → "preset")'] },
  { call: 'bindScopeParent() closing a longer cycle', act: (w) => bindScopeParent(w.keys.preset, w.keys.agent1), error: Error, message: ['scope "preset" cannot take parent "agent-1": the link would close a cycle ("preset" → "agent-1" → "preset")'] },
  { call: 'bindScopeParent() of a key that is already bound', act: (w) => bindScopeParent(w.keys.agent1, w.keys.agent2), error: Error, message: ['scope "agent-1" is already bound to a parent'] },
  { call: 'rebind() closing a cycle', arrange: (w) => bindScopeParent(w.keys.preset, { name: 'root' }), act: (w, binding: ScopeParentBinding) => binding.rebind(w.keys.agent2), error: Error, message: ['scope "preset" cannot take parent "agent-2": the link would close a cycle'] },
  { call: 'bindScopeParent() with a non-object parent', act: (w) => bindScopeParent(w.keys.preset, 'root' as never), error: TypeError, message: ['scope "preset" parent must be a scope key object (got string "root")'] },
  { call: 'createScope() re-minting a key under a different parent', act: (w) => createScope(w.app, w.keys.agent1, { parent: w.keys.agent2 }), error: Error, message: ['scope "agent-1" is already bound to a parent'] },
  { call: 'bindScopeParent() with an undefined parent', act: (w) => bindScopeParent({ name: 'agent-3' }, undefined as never), error: TypeError, message: ['scope "agent-3" parent must be a scope key object (got undefined)'] },
  { call: 'scopeChainOf() with a null key', act: () => scopeChainOf(null as never), error: TypeError, message: ['scopeChainOf() key must be a scope key object (got null)'] },
  { call: 'scopeParentOf() with an undefined key', act: () => scopeParentOf(undefined as never), error: TypeError, message: ['scopeParentOf() key must be a scope key object (got undefined)'] },
  { call: 'createScope() with a non-object key', act: (w) => createScope(w.app, 'agent-3' as never), error: TypeError, message: ['createScope() key must be a scope key object (got string "agent-3")'] },
]

const CATALOGUE: [string, Row[]][] = [
  ['registration', REGISTRATION],
  ['provider results and assembly', PROVIDERS],
  ['templates', TEMPLATES],
  ['config', CONFIG_ROWS],
  ['scope parents', SCOPES],
]

async function failure(w: World, act: () => unknown): Promise<unknown> {
  w.fault = true
  try {
    await act()
  } catch (error) {
    return error
  } finally {
    w.fault = false
  }
  throw new Error('the call did not fail')
}

describe.each(CATALOGUE)('bad input: %s', (_, rows) => {
  test.each(rows.map((row) => [row.call, row] as const))(
    '%s fails with its catalogued error and changes nothing',
    async (_call, row) => {
      const w = await world(row.config)
      const arranged = await row.arrange?.(w)
      const service = sp(w)
      const before = await observe(w)
      const stats = service.stats()
      const changes = w.changes.count

      const error = await failure(w, () => row.act(w, arranged))
      expect(error).toBeInstanceOf(row.error)
      if (row.error === Error) expect(error).not.toBeInstanceOf(TypeError)
      for (const fragment of row.message) expect((error as Error).message).toContain(fragment)

      expect(service.stats().changeEvents).toBe(stats.changeEvents)
      expect(w.changes.count).toBe(changes)
      const settled = service.stats()
      expect(await observe(w)).toEqual(before)
      // Nothing changed, so no view is re-derived, no section re-rendered and no schema cloned.
      expect(delta(settled, service.stats())).toMatchObject({
        structureRecomputes: 0,
        sectionRenders: 0,
        toolClones: 0,
        changeEvents: 0,
      })
    },
  )
})
