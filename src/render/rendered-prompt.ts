/**
 * The rendered system prompt as data (SPEC §4.1): the joined text, one part
 * per non-empty rendered section with where it came from, and the cache
 * blocks a provider request is built from. Pure: plain values in, frozen
 * plain values out, no signals and no Cordis.
 *
 *   parts   [identity][persona][tools*][date~][agent]      * cacheBreakpoint
 *   blocks  [identity persona tools]*[date]~[agent]        ~ volatile
 *            static ───────────────┘   │      └ session
 *                    breakpoint ───────┘ (ends with a cacheBreakpoint part)
 */

import type { LayerRef } from '../assembly/entries.js'
import type { Stability } from '../assembly/types.js'

/** The blank line between parts (and between blocks). */
export const PART_SEPARATOR = '\n\n'

/** Where a substituted variable value lies inside its part, in UTF-16 offsets relative to the part. */
export interface RenderedSubstitution {
  /** The variable's name. */
  readonly variable: string
  /** First code unit of the substituted value, relative to the part's `start`. */
  readonly start: number
  /** One past its last code unit, relative to the part's `start`. */
  readonly end: number
}

/** One non-empty rendered section, in prompt order. */
export interface RenderedPart {
  /** The section's name. */
  readonly name: string
  /** Its rendered output: `rendered.text.slice(start, end) === text`. */
  readonly text: string
  /** UTF-16 offset of the part in `RenderedPrompt.text`. */
  readonly start: number
  /** One past its last code unit. */
  readonly end: number
  /** The supplying layer; `undefined` when no registration supplied it. */
  readonly layer: LayerRef | undefined
  /** `'waterfall'` when a listener added the section or changed its text. */
  readonly origin: 'registry' | 'waterfall'
  /** The section's declared stability; default `'session'`. */
  readonly stability: Stability
  /** The variable names it references, in first-use order. */
  readonly variables: readonly string[]
  /** Registered with `cacheBreakpoint: true` ("cache the prompt through here"). */
  readonly cacheBreakpoint: boolean
  /** Registered with `required: true` (restored after the assemble waterfall, §5). */
  readonly required: boolean
  /** A `complete` section (the whole prompt apart from required sections). */
  readonly complete: boolean
  /** The section's budget priority (§5); default 0, higher is kept longer. */
  readonly priority: number
  /** Where substituted values lie inside `text`, in order (for `explain`). */
  readonly substitutions: readonly RenderedSubstitution[]
}

/** Consecutive parts between cache boundaries. */
export interface PromptBlock {
  /** Its parts' texts joined by a blank line. */
  readonly text: string
  /** Its parts' names, in order. */
  readonly parts: readonly string[]
  /** The least stable of its parts (static > session > volatile). */
  readonly stability: Stability
  /** `true` when the provider should cache the request through this block. */
  readonly cacheBreakpoint: boolean
}

/** A variable the parts reference, with where it came from (for the stability lint and guard). */
export interface RenderedVariable {
  /** The variable's name. */
  readonly name: string
  /** The supplying layer; `undefined` when no registration is known (a listener's value, or no provenance). */
  readonly layer: LayerRef | undefined
  /** The variable's declared stability; default `'session'`. */
  readonly stability: Stability
}

/** The rendered system prompt: `text`, its parts and its cache blocks. */
export interface RenderedPrompt {
  /** Exactly `renderPrompt(assembly)`. */
  readonly text: string
  /** The non-empty rendered sections, in prompt order; their texts joined by a blank line are `text`. */
  readonly parts: readonly RenderedPart[]
  /** The cache blocks; their texts joined by a blank line are `text`. */
  readonly blocks: readonly PromptBlock[]
  /** The variables the parts reference, in first-use order. */
  readonly variables: readonly RenderedVariable[]
}

/** What a part is before it is placed in a prompt: everything but its offsets. */
export type PartInput = Omit<RenderedPart, 'start' | 'end'>

const RANK: Readonly<Record<Stability, number>> = { static: 0, session: 1, volatile: 2 }

/**
 * Places `inputs` (non-empty texts, in prompt order) into one frozen
 * `RenderedPrompt`: offsets, the joined text and the blocks. A new block
 * starts after every `cacheBreakpoint` part and wherever the stability class
 * changes; a block is a breakpoint when it ends with a `cacheBreakpoint` part,
 * or when it is not volatile and the next block is (cache through every
 * stable run a volatile block interrupts). `variables` keeps those the parts
 * reference. Throws a `TypeError` for an empty part text, which is never in
 * the prompt.
 */
export function buildRenderedPrompt(inputs: readonly PartInput[], variables: readonly RenderedVariable[] = []): RenderedPrompt {
  const parts: RenderedPart[] = []
  let offset = 0
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!
    if (input.text === '') throw new TypeError(`rendered part "${input.name}" is empty; empty outputs are not part of the prompt`)
    if (i > 0) offset += PART_SEPARATOR.length
    const end = offset + input.text.length
    parts.push(Object.freeze({ ...input, start: offset, end }))
    offset = end
  }
  const text = parts.length === 1 ? parts[0]!.text : parts.map((part) => part.text).join(PART_SEPARATOR)
  const referenced = new Set<string>()
  for (const part of parts) for (const name of part.variables) referenced.add(name)
  const kept = Object.freeze(variables.filter((variable) => referenced.has(variable.name)).map((variable) => Object.freeze({ ...variable })))
  return Object.freeze({ text, parts: Object.freeze(parts), blocks: blocksOf(parts), variables: kept })
}

function blocksOf(parts: readonly RenderedPart[]): readonly PromptBlock[] {
  const runs: RenderedPart[][] = []
  let run: RenderedPart[] = []
  for (const part of parts) {
    if (run.length > 0 && run[run.length - 1]!.stability !== part.stability) {
      runs.push(run)
      run = []
    }
    run.push(part)
    if (part.cacheBreakpoint) {
      runs.push(run)
      run = []
    }
  }
  if (run.length > 0) runs.push(run)
  const blocks: PromptBlock[] = []
  for (let i = 0; i < runs.length; i++) {
    const members = runs[i]!
    let stability: Stability = 'static'
    for (const part of members) if (RANK[part.stability] > RANK[stability]) stability = part.stability
    const next = runs[i + 1]
    const nextVolatile = next !== undefined && next.some((part) => part.stability === 'volatile')
    const cacheBreakpoint = members[members.length - 1]!.cacheBreakpoint || (stability !== 'volatile' && nextVolatile)
    blocks.push(
      Object.freeze({
        text: members.length === 1 ? members[0]!.text : members.map((part) => part.text).join(PART_SEPARATOR),
        parts: Object.freeze(members.map((part) => part.name)),
        stability,
        cacheBreakpoint,
      }),
    )
  }
  return Object.freeze(blocks)
}
