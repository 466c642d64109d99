/**
 * What every request builder checks and resolves first: the assembly's tools
 * (no reserved name), the caller's history (an array, never mutated), the
 * `RenderedPrompt` (rendered when omitted) and the runtime-context snapshot.
 */

import { TOOL_ORDER_REST } from '../assembly/orders.js'
import { stillDeferred } from '../assembly/presentation.js'
import { recordOf } from '../assembly/provenance.js'
import { renderContextSnapshot } from '../render/render.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { render } from '../render/render.js'
import { isLazyPrompt, type RenderedPrompt } from '../render/rendered-prompt.js'

/** The part of an assembly a request builder reads. */
export type RequestAssembly = Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>

/** The options every request builder shares. */
export interface RequestOptions {
  /** The step's assembly (from `assemble()`). */
  readonly assembly: RequestAssembly
  /** The step's `RenderedPrompt` (e.g. `StepResult.rendered`); `render(assembly)` when omitted. */
  readonly rendered?: RenderedPrompt
  /** The runtime-context snapshot to send; default `renderContextSnapshot(assembly)`; `false` or `''` for none. */
  readonly snapshot?: string | false
}

/** The resolved inputs of one request. */
export interface ResolvedRequest {
  readonly rendered: RenderedPrompt
  readonly tools: readonly ToolSchema[]
  /** `''` when no snapshot is sent. */
  readonly snapshot: string
}

/** A short description of a wrong value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
  if (typeof value === 'object') return 'an object'
  return typeof value === 'function' ? 'a function' : `${typeof value} ${String(value)}`
}

/**
 * Whether `assembly` is a result whose `sections` nobody has read yet (its
 * plan's entries, an array by construction): checked without reading them,
 * since a read builds the array and takes render()'s unchanged-prompt
 * answer away from the step.
 */
function sectionsUnread(assembly: object): boolean {
  const deferred = recordOf(assembly)?.deferred
  return deferred !== undefined && stillDeferred(assembly, deferred)
}

/**
 * Validates `options` of the builder `fn` and resolves its prompt, tools and
 * snapshot. Throws a `TypeError` naming the argument: an assembly without a
 * tools array or with a tool named `TOOL_ORDER_REST`, a `history` (named
 * `historyName`) that is not an array, a `snapshot` that is neither a string
 * nor `false`, a `rendered` that is not a RenderedPrompt.
 */
export function resolveRequest(fn: string, options: RequestOptions, history: unknown, historyName: string): ResolvedRequest {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${fn} expects an options object { assembly, ${historyName}, … } (got ${describe(options)})`)
  }
  const { assembly, snapshot } = options
  if (typeof assembly !== 'object' || assembly === null || !Array.isArray(assembly.tools) || !(sectionsUnread(assembly) || Array.isArray(assembly.sections))) {
    throw new TypeError(`${fn} option "assembly" must be a prompt assembly (got ${describe(assembly)}); pass the result of systemPrompt.assemble()`)
  }
  for (const tool of assembly.tools) {
    if (tool?.name === TOOL_ORDER_REST) {
      throw new TypeError(
        `${fn} option "assembly" has a tool named "${TOOL_ORDER_REST}", which is reserved for toolOrder's rest entry; rename the tool`,
      )
    }
  }
  if (!Array.isArray(history)) {
    throw new TypeError(`${fn} option "${historyName}" must be an array of the provider's messages (got ${describe(history)}); pass [] for none`)
  }
  if (snapshot !== undefined && snapshot !== false && typeof snapshot !== 'string') {
    throw new TypeError(`${fn} option "snapshot" must be a string, or false for none (got ${describe(snapshot)})`)
  }
  const rendered = options.rendered ?? render(assembly)
  // A prompt render() made is checked without reading `text` (a join the blocks-based requests never need).
  if (typeof rendered !== 'object' || rendered === null || (!isLazyPrompt(rendered) && (typeof rendered.text !== 'string' || !Array.isArray(rendered.blocks)))) {
    throw new TypeError(`${fn} option "rendered" must be a RenderedPrompt (got ${describe(rendered)}); pass StepResult.rendered or omit it`)
  }
  const text = snapshot === undefined ? renderContextSnapshot(assembly) : snapshot === false ? '' : snapshot
  return { rendered, tools: assembly.tools, snapshot: text }
}
