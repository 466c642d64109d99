/**
 * The cache blocks of a rendered prompt (SPEC §4.1), computed from the
 * prompt's non-empty items in order: their names, texts, declared stability
 * and `cacheBreakpoint` flags. The items come from the parts when those were
 * built, or straight from the render memo's outputs and the section sources
 * (a provider request reads only `blocks`: no part object is made for it).
 *
 * A new block starts after every `cacheBreakpoint` item and wherever the
 * stability class changes; a block is a breakpoint when it ends with a
 * `cacheBreakpoint` item, or when it is not volatile and the next block is.
 * A block whose members have the same names, texts and flags as a block of
 * the previous prompt (at the same index, or with the same first member) is
 * that block.
 *
 * A block's `text` is joined from its members when first read. A block a
 * later prompt reused has shown it is stable and keeps its text for as long
 * as it lives. A block no prompt reused yet keeps its text only until the
 * next prompt's blocks are built, anywhere: a loop keeps its last prompt
 * until that scope's next step, so the text of a block that changed would
 * outlive a few scavenges and be copied into old space, only to die there
 * when the block changes again (in the benchmark world a ~90 KiB string a
 * step, about a third of a churn step read through blocks); dropped, it dies
 * young. A later read joins it again, equal to the first.
 */
import { hiddenState } from '../assembly/hidden-state.js'
import type { Stability } from '../assembly/types.js'
import type { PromptBlock, RenderedPart } from './rendered-prompt.js'

/** The non-empty items of a prompt, in order, as parallel arrays. */
export interface BlockItems {
  readonly names: readonly string[]
  readonly texts: readonly string[]
  readonly stabilities: readonly Stability[]
  readonly breakpoints: readonly boolean[]
}

/**
 * What a block was made of, so a later prompt can tell an unchanged block
 * (names are its `parts`), and its text while it is held.
 */
interface Members {
  readonly texts: readonly string[]
  readonly stabilities: readonly Stability[]
  readonly breakpoints: readonly boolean[]
  readonly separator: string
  joined: string | undefined
  /** Reused by a later prompt: its text is kept from then on. */
  stable: boolean
}

/** Where a block keeps its members (see hidden-state.ts). */
const MEMBERS = hiddenState<Members>(
  'promptloom.promptBlock',
  'a prompt block accessor was called on an object that is not a prompt block; read "text" from the blocks of a rendered prompt',
)

/** The members of not yet reused blocks whose texts were joined since the last blocks were built. */
const held: Members[] = []

// Shared by every block, so all blocks share one hidden class.
const TEXT: PropertyDescriptor = {
  get(this: unknown): string {
    const members = MEMBERS.of(this)
    if (members.joined === undefined) {
      members.joined = joined(members.texts, 0, members.texts.length, members.separator)
      if (!members.stable) held.push(members)
    }
    return members.joined
  },
  enumerable: true,
}

function blockOf(members: Members, parts: readonly string[], stability: Stability, cacheBreakpoint: boolean): PromptBlock {
  // The members first (see hidden-state.ts), then `text`, so spread and JSON list the fields in the
  // order of the interface, then the rest by assignment: every block shares one fast hidden class.
  const block = {} as { parts: readonly string[]; stability: Stability; cacheBreakpoint: boolean }
  MEMBERS.attach(block, members)
  Object.defineProperty(block, 'text', TEXT)
  block.parts = parts
  block.stability = stability
  block.cacheBreakpoint = cacheBreakpoint
  return Object.freeze(block) as unknown as PromptBlock
}

/** Drops the texts joined for blocks that no prompt reused (the blocks just built marked theirs stable). */
function releaseHeld(): void {
  if (held.length === 0) return
  for (const members of held) if (!members.stable) members.joined = undefined
  held.length = 0
}

const RANK: Readonly<Record<Stability, number>> = { static: 0, session: 1, volatile: 2 }

/** The block items of built parts. */
export function itemsOfParts(parts: readonly RenderedPart[]): BlockItems {
  const count = parts.length
  const names = new Array<string>(count)
  const texts = new Array<string>(count)
  const stabilities = new Array<Stability>(count)
  const breakpoints = new Array<boolean>(count)
  for (let i = 0; i < count; i++) {
    const part = parts[i]!
    names[i] = part.name
    texts[i] = part.text
    stabilities[i] = part.stability
    breakpoints[i] = part.cacheBreakpoint
  }
  return { names, texts, stabilities, breakpoints }
}

/** Whether `block`'s members are items `start`…`end - 1`. */
function sameMembers(block: PromptBlock, items: BlockItems, start: number, end: number): boolean {
  const members = MEMBERS.peek(block)
  if (members === undefined || members.texts.length !== end - start) return false
  const { names, texts, stabilities, breakpoints } = items
  for (let j = 0; j < end - start; j++) {
    const i = start + j
    if (block.parts[j] !== names[i] || members.stabilities[j] !== stabilities[i] || members.breakpoints[j] !== breakpoints[i]) return false
    if (members.texts[j] !== texts[i]) return false
  }
  return true
}

function joined(texts: readonly string[], start: number, end: number, separator: string): string {
  if (end - start === 1) return texts[start]!
  const out = new Array<string>(end - start)
  for (let i = start; i < end; i++) out[i - start] = texts[i]!
  return out.join(separator)
}

/** The blocks of `items` (texts joined by `separator`), reusing `previous`'s unchanged blocks. */
export function blocksOf(items: BlockItems, previous: readonly PromptBlock[] | undefined, separator: string): readonly PromptBlock[] {
  const { names, texts, stabilities, breakpoints } = items
  const count = names.length
  // Run boundaries: run r is items ends[r - 1] (or 0) … ends[r] - 1.
  const ends: number[] = []
  for (let i = 0; i < count; i++) {
    if (i > 0 && stabilities[i] !== stabilities[i - 1] && ends[ends.length - 1] !== i) ends.push(i)
    if (breakpoints[i]) ends.push(i + 1)
  }
  if (count > 0 && ends[ends.length - 1] !== count) ends.push(count)
  let byFirst: Map<string, PromptBlock> | undefined
  const blocks = new Array<PromptBlock>(ends.length)
  let start = 0
  for (let r = 0; r < ends.length; r++) {
    const end = ends[r]!
    let stability: Stability = 'static'
    for (let i = start; i < end; i++) if (RANK[stabilities[i]!] > RANK[stability]) stability = stabilities[i]!
    let nextVolatile = false
    if (r + 1 < ends.length) for (let i = end; !nextVolatile && i < ends[r + 1]!; i++) nextVolatile = stabilities[i] === 'volatile'
    const cacheBreakpoint = breakpoints[end - 1]! || (stability !== 'volatile' && nextVolatile)
    let block: PromptBlock | undefined
    if (previous !== undefined) {
      let candidate: PromptBlock | undefined = previous[r]
      if (candidate === undefined || candidate.parts[0] !== names[start]) {
        if (byFirst === undefined) {
          byFirst = new Map()
          for (const held of previous) byFirst.set(held.parts[0]!, held)
        }
        candidate = byFirst.get(names[start]!)
      }
      if (candidate !== undefined && candidate.cacheBreakpoint === cacheBreakpoint && sameMembers(candidate, items, start, end)) {
        block = candidate
        MEMBERS.of(candidate).stable = true
      }
    }
    if (block === undefined) {
      const members: Members = { texts: texts.slice(start, end), stabilities: stabilities.slice(start, end), breakpoints: breakpoints.slice(start, end), separator, joined: undefined, stable: false }
      block = blockOf(members, Object.freeze(names.slice(start, end)), stability, cacheBreakpoint)
    }
    blocks[r] = block
    start = end
  }
  releaseHeld()
  return Object.freeze(blocks)
}
