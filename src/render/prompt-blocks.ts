/**
 * The cache blocks of a rendered prompt (SPEC §4.1), computed from the
 * prompt's non-empty items in order: their names, texts, declared stability
 * and `cacheBreakpoint` flags. The items come from the parts when those were
 * built, or straight from the render memo's outputs and the section sources
 * (a provider request reads only `blocks`: no part object is made for it).
 *
 * A new block starts after every `cacheBreakpoint` item and wherever the
 * stability class changes, so the items of one block share one stability.
 * The blocks before the first volatile one (all blocks when none is) are the
 * stable run; a block is a breakpoint exactly when it lies in the stable run
 * and ends with a `cacheBreakpoint` item or is the stable run's last block:
 *
 *   items   [a][b*][c]  [d~][e*][f]        * cacheBreakpoint   ~ volatile
 *   blocks  [a b]* [c]*  [d]  [e]  [f]     e gets no marker: its prefix holds d
 *           └── stable run ─┘
 *
 * A marker after volatile bytes could only pay for cache writes (its prefix
 * changes every step), and an unannotated prompt is cached through its end.
 *
 * Blocks are plain frozen objects, their `text` joined when they are built. A
 * block equal to one of the previous prompt's blocks (same parts, member
 * texts, stability and flag) is that block, so an unchanged block keeps its
 * identity (and its joined text) from step to step.
 */
import type { Stability } from '../assembly/types.js'
import type { PromptBlock, RenderedPart } from './rendered-prompt.js'

/** The non-empty items of a prompt, in order, as parallel arrays. */
export interface BlockItems {
  readonly names: readonly string[]
  readonly texts: readonly string[]
  readonly stabilities: readonly Stability[]
  readonly breakpoints: readonly boolean[]
}

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

/** Where each block ends: after every breakpoint item and before every stability change (exclusive item indexes). */
function blockEnds(items: BlockItems): number[] {
  const { stabilities, breakpoints } = items
  const count = stabilities.length
  const ends: number[] = []
  for (let i = 0; i < count; i++) {
    if (i > 0 && stabilities[i] !== stabilities[i - 1] && ends[ends.length - 1] !== i) ends.push(i)
    if (breakpoints[i]) ends.push(i + 1)
  }
  if (count > 0 && ends[ends.length - 1] !== count) ends.push(count)
  return ends
}

/**
 * The member texts each block was joined from, so the next prompt compares
 * them instead of the joined text: the render memo hands back the same string
 * objects for unchanged sections, so the compare is mostly by identity. The
 * one place this is kept; a block not made here has none and is never reused.
 */
const MEMBER_TEXTS = new WeakMap<PromptBlock, readonly string[]>()

/** Whether `block` is the block of items `start`…`end - 1` with these fields. */
function sameBlock(block: PromptBlock, items: BlockItems, start: number, end: number, stability: Stability, cacheBreakpoint: boolean): boolean {
  const members = MEMBER_TEXTS.get(block)
  if (members === undefined || block.stability !== stability || block.cacheBreakpoint !== cacheBreakpoint || members.length !== end - start) return false
  const { names, texts } = items
  for (let i = start; i < end; i++) {
    if (block.parts[i - start] !== names[i] || members[i - start] !== texts[i]) return false
  }
  return true
}

function joined(texts: readonly string[], start: number, end: number, separator: string): string {
  return end - start === 1 ? texts[start]! : texts.slice(start, end).join(separator)
}

/**
 * The frozen blocks of `items` (texts joined by `separator`), each a frozen
 * plain object. A block equal to one of `previous` is that object.
 */
export function blocksOf(items: BlockItems, previous: readonly PromptBlock[] | undefined, separator: string): readonly PromptBlock[] {
  const { names, texts, stabilities, breakpoints } = items
  const ends = blockEnds(items)
  // A block's items share one stability (blocks split where it changes).
  let stableRun = ends.length
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    if (stabilities[start] === 'volatile') {
      stableRun = r
      break
    }
  }
  let byFirst: Map<string, PromptBlock> | undefined
  const blocks = new Array<PromptBlock>(ends.length)
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    const end = ends[r]!
    const stability = stabilities[start]!
    const cacheBreakpoint = r < stableRun && (breakpoints[end - 1]! || r === stableRun - 1)
    let block: PromptBlock | undefined
    if (previous !== undefined) {
      let candidate: PromptBlock | undefined = previous[r]
      if (candidate === undefined || candidate.parts[0] !== names[start]) {
        if (byFirst === undefined) {
          byFirst = new Map()
          for (const old of previous) byFirst.set(old.parts[0]!, old)
        }
        candidate = byFirst.get(names[start]!)
      }
      if (candidate !== undefined && sameBlock(candidate, items, start, end, stability, cacheBreakpoint)) block = candidate
    }
    if (block === undefined) {
      block = Object.freeze({ text: joined(texts, start, end, separator), parts: Object.freeze(names.slice(start, end)), stability, cacheBreakpoint })
      MEMBER_TEXTS.set(block, texts.slice(start, end))
    }
    blocks[r] = block
  }
  return Object.freeze(blocks)
}
