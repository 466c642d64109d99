/**
 * The cache blocks of a rendered prompt (SPEC §4.1), computed from its parts
 * in order.
 *
 * A new block starts after every `cacheBreakpoint` part and wherever the
 * stability class changes, so the parts of one block share one stability.
 * The blocks before the first volatile one (all blocks when none is) are the
 * stable run; a block is a breakpoint exactly when it lies in the stable run
 * and ends with a `cacheBreakpoint` part or is the stable run's last block:
 *
 *   parts   [a][b*][c]  [d~][e*][f]        * cacheBreakpoint   ~ volatile
 *   blocks  [a b]* [c]*  [d]  [e]  [f]     e gets no marker: its prefix holds d
 *           └── stable run ─┘
 *
 * A marker after volatile bytes could only pay for cache writes (its prefix
 * changes every step), and an unannotated prompt is cached through its end.
 *
 * A block the previous prompt of the same scope had at the same position,
 * with the same part names, texts and flags, is taken over as it is. A new
 * block's text is its parts' texts concatenated, not joined: V8 keeps a
 * concatenation as a rope over the part texts and copies it once, when a
 * reader first looks at its characters, so a step pays for the texts it
 * reads (docs/design.md has the figures).
 */
import { PART_SEPARATOR, type PromptBlock, type RenderedPart, type RenderedPrompt } from './rendered-prompt.js'

/** Where each block ends: after every breakpoint part and before every stability change (exclusive part indexes). */
function blockEnds(parts: readonly RenderedPart[]): number[] {
  const ends: number[] = []
  for (let i = 0; i < parts.length; i++) {
    if (i > 0 && parts[i]!.stability !== parts[i - 1]!.stability && ends[ends.length - 1] !== i) ends.push(i)
    if (parts[i]!.cacheBreakpoint) ends.push(i + 1)
  }
  if (parts.length > 0 && ends[ends.length - 1] !== parts.length) ends.push(parts.length)
  return ends
}

/** Whether `block`, which covers `previous.parts` from `at` on, is the block of `members` with these flags. */
function sameBlock(block: PromptBlock, at: number, previous: RenderedPrompt, members: readonly RenderedPart[], stability: string, cacheBreakpoint: boolean): boolean {
  if (block.stability !== stability || block.cacheBreakpoint !== cacheBreakpoint || block.parts.length !== members.length) return false
  for (let j = 0; j < members.length; j++) {
    const old = previous.parts[at + j]
    if (old === undefined || old.name !== members[j]!.name || old.text !== members[j]!.text) return false
  }
  return true
}

/**
 * The frozen blocks of `parts` (their texts joined by a blank line), each a
 * frozen plain object; a block equal to `previous`'s block at the same
 * position is that block.
 */
export function blocksOf(parts: readonly RenderedPart[], previous?: RenderedPrompt): readonly PromptBlock[] {
  const ends = blockEnds(parts)
  let stableRun = ends.length
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    if (parts[start]!.stability === 'volatile') {
      stableRun = r
      break
    }
  }
  const blocks = new Array<PromptBlock>(ends.length)
  // Where the previous prompt's block r starts in its parts.
  let at = 0
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    const members = parts.slice(start, ends[r])
    const stability = members[0]!.stability
    const cacheBreakpoint = r < stableRun && (members[members.length - 1]!.cacheBreakpoint || r === stableRun - 1)
    const old = previous?.blocks[r]
    if (old !== undefined && sameBlock(old, at, previous!, members, stability, cacheBreakpoint)) blocks[r] = old
    else {
      let text = members[0]!.text
      for (let j = 1; j < members.length; j++) text = text + PART_SEPARATOR + members[j]!.text
      blocks[r] = Object.freeze({
        text,
        parts: Object.freeze(members.map((part) => part.name)),
        stability,
        cacheBreakpoint,
      })
    }
    at += old?.parts.length ?? 0
  }
  return Object.freeze(blocks)
}
