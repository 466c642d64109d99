// The rendered system prompt as a frozen plain object (SPEC §4.1); its cache blocks are cut in prompt-blocks.ts.

import type { LayerRef } from '../assembly/entries.js'
import type { Stability } from '../assembly/types.js'
import { blocksOf } from './prompt-blocks.js'

export const PART_SEPARATOR = '\n\n'

/** Where a substituted variable value lies inside its part, in UTF-16 offsets relative to the part. */
export interface RenderedSubstitution {
  readonly variable: string
  readonly start: number
  readonly end: number
}

/** One non-empty rendered section, in prompt order. */
export interface RenderedPart {
  readonly name: string
  /** `rendered.text.slice(start, end) === text` (UTF-16 offsets). */
  readonly text: string
  readonly start: number
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
  /** A required section a listener dropped, edited or moved, restored after the waterfall (§5); `false` without provenance. */
  readonly restored: boolean
  /** A `complete` section (the whole prompt apart from required sections). */
  readonly complete: boolean
  /** The section's budget priority (§5); default 0, higher is kept longer. */
  readonly priority: number
  /** Where substituted values lie inside `text`, in order. */
  readonly substitutions: readonly RenderedSubstitution[]
}

/** Consecutive parts between cache boundaries. */
export interface PromptBlock {
  /** Its parts' texts joined by a blank line. */
  readonly text: string
  /** Its parts' names. */
  readonly parts: readonly string[]
  /** The least stable of its parts (static > session > volatile). */
  readonly stability: Stability
  /** `true` when the provider should cache the request through this block. */
  readonly cacheBreakpoint: boolean
}

/** A variable the parts reference, with where it came from. */
export interface RenderedVariable {
  readonly name: string
  /** `undefined` when no registration is known (a listener's value, or no provenance). */
  readonly layer: LayerRef | undefined
  /** Declared stability; default `'session'`. */
  readonly stability: Stability
}

/** The rendered system prompt: `text`, its parts and its cache blocks. */
export interface RenderedPrompt {
  /** Exactly `renderPrompt(assembly)`. */
  readonly text: string
  /** In prompt order; their texts joined by a blank line are `text`. */
  readonly parts: readonly RenderedPart[]
  /** Their texts joined by a blank line are `text`. */
  readonly blocks: readonly PromptBlock[]
  /** The variables the parts reference, in first-use order. */
  readonly variables: readonly RenderedVariable[]
}

/** What a part is before it is placed in a prompt: everything but its offsets (`restored` defaults to `false`). */
export type PartInput = Omit<RenderedPart, 'start' | 'end' | 'restored'> & { readonly restored?: boolean }

/**
 * Places `inputs` (in prompt order) into one frozen `RenderedPrompt`, keeping only the `variables` the parts reference.
 * A frozen part already at its offset, and a block equal to `previous`'s at its position, is kept as the same object.
 * Throws a `TypeError` for an empty part text.
 */
export function buildRenderedPrompt(
  inputs: readonly (PartInput | RenderedPart)[],
  variables: readonly RenderedVariable[] = [],
  previous?: RenderedPrompt,
): RenderedPrompt {
  const parts = new Array<RenderedPart>(inputs.length)
  let offset = 0
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!
    if (input.text === '') throw new TypeError(`rendered part "${input.name}" is empty; empty outputs are not part of the prompt`)
    if (i > 0) offset += PART_SEPARATOR.length
    const part = 'start' in input && input.start === offset && Object.isFrozen(input) ? input : placePart(input, offset)
    parts[i] = part
    offset = part.end
  }
  const referenced = new Set(parts.flatMap((part) => part.variables))
  const kept = variables.filter((variable) => referenced.has(variable.name)).map((variable) => (Object.isFrozen(variable) ? variable : Object.freeze({ ...variable })))
  return promptOf(parts, kept, previous)
}

/** The frozen prompt of placed, frozen, non-empty `parts` and the frozen `variables` they reference. */
export function promptOf(parts: RenderedPart[], variables: readonly RenderedVariable[], previous?: RenderedPrompt): RenderedPrompt {
  const blocks = blocksOf(parts, previous)
  // Concatenated (a rope), as block texts are: a reader of the blocks never copies the whole prompt.
  let text = blocks.length === 0 ? '' : blocks[0]!.text
  for (let r = 1; r < blocks.length; r++) text = text + PART_SEPARATOR + blocks[r]!.text
  return Object.freeze({ text, parts: Object.freeze(parts), blocks, variables: Object.freeze(variables) })
}

function placePart(input: PartInput, start: number): RenderedPart {
  return Object.freeze({
    name: input.name,
    text: input.text,
    start,
    end: start + input.text.length,
    layer: input.layer,
    origin: input.origin,
    stability: input.stability,
    variables: input.variables,
    cacheBreakpoint: input.cacheBreakpoint,
    required: input.required,
    restored: input.restored === true,
    complete: input.complete,
    priority: input.priority,
    substitutions: input.substitutions,
  })
}
