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

import { hiddenState } from '../assembly/hidden-state.js'
import type { LayerRef } from '../assembly/entries.js'
import type { Stability } from '../assembly/types.js'
import { blocksOf, itemsOfParts, type BlockItems } from './prompt-blocks.js'

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
  /**
   * A required section the assembly restored after the waterfall, because a
   * listener dropped, edited or reordered it (§5); the step surface warns once
   * about it. Always `false` for a result that lost its `assemble()` provenance.
   */
  readonly restored: boolean
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

/** The frozen variables the renderer made itself (one per registration): kept as they are, not copied. */
export const SHARED_VARIABLES = new WeakSet<RenderedVariable>()

/** What a part is before it is placed in a prompt: everything but its offsets (`restored` defaults to `false`). */
export type PartInput = Omit<RenderedPart, 'start' | 'end' | 'restored'> & { readonly restored?: boolean }

/**
 * `input` placed at `start`, frozen. One explicit literal, so every part
 * shares one hidden class (a spread of the input gave most parts their own).
 */
export function placePart(input: PartInput, start: number): RenderedPart {
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


/**
 * Places `inputs` (non-empty texts, in prompt order) into one frozen
 * `RenderedPrompt`: offsets, the joined text and the blocks (see
 * prompt-blocks.ts for where blocks split and which are breakpoints: those of
 * the stable run before the first volatile block). `variables` keeps those the parts
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
    const part = placePart(input, offset)
    parts.push(part)
    offset = part.end
  }
  return promptOf(parts, variables, undefined)
}

/** What a prompt has built so far (its parts, in an array that is not frozen; its variables and blocks), for the next render of its scope to start from. Read-only. */
interface Built {
  readonly parts: readonly RenderedPart[] | undefined
  readonly variables: readonly RenderedVariable[] | undefined
  readonly blocks: readonly PromptBlock[] | undefined
}

/** What one prompt made by `lazyPromptOf` has computed, and what it needs for the rest. */
interface LazyFields {
  joined: string | undefined
  /** The joined outputs, until the text is read (then dropped). */
  joinOutputs: (() => string) | undefined
  /** Makes the parts and variables on first need (then dropped). */
  make: (() => { readonly parts: readonly RenderedPart[]; readonly variables: readonly RenderedVariable[] }) | undefined
  parts: readonly RenderedPart[] | undefined
  /** The same parts in an array that is not frozen: V8 reads a frozen array's elements several times slower, and the renderer walks these again. */
  working: readonly RenderedPart[] | undefined
  variables: readonly RenderedVariable[] | undefined
  blocks: readonly PromptBlock[] | undefined
  /** The blocks of the prompt it replaced, when those were built: reused by `blocks`, dropped once used. */
  previousBlocks: readonly PromptBlock[] | undefined
  /** The block items without the parts, while the parts are not built (then dropped). */
  blockItems: (() => BlockItems) | undefined
}

/** Where a prompt keeps its lazy fields (see hidden-state.ts). */
const LAZY = hiddenState<LazyFields>(
  'promptloom.renderedPrompt',
  'a rendered prompt accessor was called on an object that is not a rendered prompt; read "text", "parts", "blocks" and "variables" from the object render() returned',
)

/**
 * The parts and blocks `prompt` has already built, without building them: a
 * later prompt reuses them, and never holds the prompt itself (a text-only
 * loop would otherwise chain every prompt it rendered).
 */
export function builtSoFar(prompt: RenderedPrompt | undefined): Built {
  const fields = LAZY.peek(prompt)
  return fields === undefined ? NOTHING_BUILT : { parts: fields.working, variables: fields.variables, blocks: fields.blocks }
}

/** Whether `value` is (or reads through to) a prompt `render()` made: its four fields are the shared accessors, `text` a string. */
export function isLazyPrompt(value: object): boolean {
  return LAZY.peek(value) !== undefined
}

const NOTHING_BUILT: Built = Object.freeze({ parts: undefined, variables: undefined, blocks: undefined })

/** The variables of `variables` that `parts` reference, frozen (the renderer's own records are kept as they are). */
function keptVariables(parts: readonly RenderedPart[], variables: readonly RenderedVariable[]): readonly RenderedVariable[] {
  const referenced = new Set<string>()
  for (const part of parts) for (const name of part.variables) referenced.add(name)
  return Object.freeze(
    variables.filter((variable) => referenced.has(variable.name)).map((variable) => (SHARED_VARIABLES.has(variable) ? variable : Object.freeze({ ...variable }))),
  )
}

/**
 * The frozen prompt over placed `parts`. `text` and `blocks` are own
 * enumerable accessors computed on first read and kept (spread, JSON and
 * `structuredClone` read them like data); a block whose parts have the same
 * names, texts and flags as one of `previousBlocks` is that block, text and all.
 */
export function promptOf(parts: readonly RenderedPart[], variables: readonly RenderedVariable[], previousBlocks: readonly PromptBlock[] | undefined): RenderedPrompt {
  const kept = keptVariables(parts, variables)
  Object.freeze(parts)
  return lazyPromptOf(undefined, () => ({ parts, variables: kept }), previousBlocks)
}

/**
 * A frozen prompt whose `parts` and `variables` are made by `build` on the
 * first read of either (or of `blocks`), and whose `text` is `text()` until
 * then (the joined outputs; afterwards the joined parts, the same string). A
 * loop that reads only `text` never builds a part, and with `blockItems` one
 * that reads only `blocks` (a provider request) neither. `build` and
 * `blockItems` must not throw, must agree with each other and must depend on
 * nothing that changes after this call; each is dropped once run.
 *
 * All four fields are own enumerable accessors whose getters every prompt
 * shares, defined on a plain object, so every prompt has one hidden class
 * (an object literal with accessors is a dictionary-mode object in V8,
 * ~450 bytes more per prompt); the state lives under a symbol key.
 */
export function lazyPromptOf(
  text: (() => string) | undefined,
  build: () => { readonly parts: readonly RenderedPart[]; readonly variables: readonly RenderedVariable[] },
  previousBlocks: readonly PromptBlock[] | undefined,
  blockItems?: () => BlockItems,
): RenderedPrompt {
  const fields: LazyFields = {
    joined: undefined,
    joinOutputs: text,
    make: build,
    parts: undefined,
    working: undefined,
    variables: undefined,
    blocks: undefined,
    previousBlocks,
    blockItems,
  }
  const prompt = {}
  LAZY.attach(prompt, fields)
  Object.defineProperty(prompt, 'text', TEXT)
  Object.defineProperty(prompt, 'parts', PARTS)
  Object.defineProperty(prompt, 'blocks', BLOCKS)
  Object.defineProperty(prompt, 'variables', VARIABLES)
  return Object.freeze(prompt) as RenderedPrompt
}

function partsOf(fields: LazyFields): readonly RenderedPart[] {
  if (fields.parts === undefined) {
    const made = fields.make!()
    fields.working = made.parts
    fields.parts = Object.isFrozen(made.parts) ? made.parts : Object.freeze([...made.parts])
    fields.variables = made.variables
    fields.make = undefined
  }
  return fields.parts
}

// Shared by every prompt, so all prompts share one hidden class.
const TEXT: PropertyDescriptor = {
  get(this: unknown): string {
    const fields = LAZY.of(this)
    if (fields.joined === undefined) {
      const own = fields.parts ?? (fields.joinOutputs === undefined ? partsOf(fields) : undefined)
      fields.joined = own === undefined ? fields.joinOutputs!() : own.length === 1 ? own[0]!.text : joinTexts(own)
      fields.joinOutputs = undefined
    }
    return fields.joined
  },
  enumerable: true,
}

const PARTS: PropertyDescriptor = {
  get(this: unknown): readonly RenderedPart[] {
    return partsOf(LAZY.of(this))
  },
  enumerable: true,
}

const BLOCKS: PropertyDescriptor = {
  get(this: unknown): readonly PromptBlock[] {
    const fields = LAZY.of(this)
    if (fields.blocks === undefined) {
      const items = fields.parts === undefined && fields.blockItems !== undefined ? fields.blockItems() : (partsOf(fields), itemsOfParts(fields.working!))
      fields.blocks = blocksOf(items, fields.previousBlocks, PART_SEPARATOR)
      fields.previousBlocks = undefined
      fields.blockItems = undefined
    }
    return fields.blocks
  },
  enumerable: true,
}

const VARIABLES: PropertyDescriptor = {
  get(this: unknown): readonly RenderedVariable[] {
    const fields = LAZY.of(this)
    partsOf(fields)
    return fields.variables!
  },
  enumerable: true,
}

function joinTexts(parts: readonly { readonly text: string }[]): string {
  const texts = new Array<string>(parts.length)
  for (let i = 0; i < parts.length; i++) texts[i] = parts[i]!.text
  return texts.join(PART_SEPARATOR)
}

/** The non-empty `outputs` joined by a blank line: the text of the parts they make, without making them. */
export function joinOutputs(outputs: readonly string[]): string {
  let count = 0
  for (let i = 0; i < outputs.length; i++) if (outputs[i] !== '') count++
  if (count === outputs.length) return count === 1 ? outputs[0]! : outputs.join(PART_SEPARATOR)
  const texts = new Array<string>(count)
  for (let i = 0, j = 0; i < outputs.length; i++) if (outputs[i] !== '') texts[j++] = outputs[i]!
  return count === 1 ? texts[0]! : texts.join(PART_SEPARATOR)
}

