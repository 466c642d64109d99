/** What every request builder checks and resolves first: the assembly's tools, the history, the prompt and the snapshot. */

import { describeValue } from '../assembly/errors.js'
import { TOOL_ORDER_REST } from '../assembly/orders.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { render, renderContextSnapshot } from '../render/render.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'

/** The part of an assembly a request builder reads. */
export type RequestAssembly = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

/** The options every request builder shares. */
export interface RequestOptions {
  readonly assembly: RequestAssembly
  /** The step's `RenderedPrompt` (e.g. `StepResult.rendered`); `render(assembly)` when omitted. */
  readonly rendered?: RenderedPrompt
  /** The runtime-context snapshot to send; default `renderContextSnapshot(assembly)`; `false` or `''` for none. */
  readonly snapshot?: string | false
}

/** Throws a `TypeError` naming the tool (or its index) for a schema a request cannot declare. */
function checkTool(fn: string, tool: unknown, index: number): void {
  if (typeof tool !== 'object' || tool === null) {
    throw new TypeError(`${fn} option "assembly" has ${describeValue(tool)} as tool ${index}; each tool must be a schema { name, description, parameters }`)
  }
  const { name, parameters } = tool as Partial<ToolSchema>
  if (name === TOOL_ORDER_REST) {
    throw new TypeError(`${fn} option "assembly" has a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`)
  }
  const label = typeof name === 'string' ? `tool "${name}"` : `tool ${index}`
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new TypeError(
      `${fn} option "assembly" has ${label} whose parameters are ${describeValue(parameters)}; a tool's parameters must be a JSON Schema object, e.g. { type: 'object', properties: {} }`,
    )
  }
}

/** Throws a `TypeError` naming the first history element that is not a message whose `content` is a string or an array (or absent, if `'optional'`). */
function checkHistory(fn: string, historyName: string, history: readonly unknown[], rule: 'required' | 'optional'): void {
  for (let i = 0; i < history.length; i++) {
    const message = history[i]
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw new TypeError(`${fn} option "${historyName}" has ${describeValue(message)} at index ${i}; every element must be a message object of the provider's format`)
    }
    const { content } = message as { content?: unknown }
    if (typeof content === 'string' || Array.isArray(content) || (rule === 'optional' && content == null)) continue
    throw new TypeError(
      `${fn} option "${historyName}" has a message at index ${i} whose content is ${describeValue(content)}; content must be a string or an array of content parts`,
    )
  }
}

/** Where the trailing run of messages with one of `roles` starts: `history.length` when there is none. */
export function trailingInstructionsStart(history: readonly unknown[], roles: readonly string[]): number {
  let start = history.length
  while (start > 0 && roles.includes((history[start - 1] as { role?: unknown }).role as string)) start--
  return start
}

/** Validates `options` of the builder `fn`; resolves its prompt, tools and snapshot (`''`: none). Throws a `TypeError` naming what is bad. */
export function resolveRequest(fn: string, options: RequestOptions, history: unknown, historyName: string, rule: 'required' | 'optional') {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${fn} expects an options object { assembly, ${historyName}, … } (got ${describeValue(options)})`)
  }
  const { assembly, snapshot } = options
  if (typeof assembly !== 'object' || assembly === null || !Array.isArray(assembly.tools) || !Array.isArray(assembly.sections)) {
    throw new TypeError(`${fn} option "assembly" must be a prompt assembly (got ${describeValue(assembly)}); pass the result of systemPrompt.assemble()`)
  }
  assembly.tools.forEach((tool: unknown, index) => checkTool(fn, tool, index))
  if (!Array.isArray(history)) {
    throw new TypeError(`${fn} option "${historyName}" must be an array of the provider's messages (got ${describeValue(history)}); pass [] for none`)
  }
  if (snapshot !== undefined && snapshot !== false && typeof snapshot !== 'string') {
    throw new TypeError(`${fn} option "snapshot" must be a string, or false for none (got ${describeValue(snapshot)})`)
  }
  const rendered = options.rendered ?? render(assembly)
  if (typeof rendered !== 'object' || rendered === null || typeof rendered.text !== 'string' || !Array.isArray(rendered.blocks)) {
    throw new TypeError(`${fn} option "rendered" must be a RenderedPrompt (got ${describeValue(rendered)}); pass StepResult.rendered or omit it`)
  }
  checkHistory(fn, historyName, history, rule)
  const text = snapshot === undefined ? renderContextSnapshot(assembly) : snapshot === false ? '' : snapshot
  return { rendered, tools: assembly.tools, snapshot: text }
}
