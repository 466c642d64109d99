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
 */
import type { PromptBlock, RenderedPart } from './rendered-prompt.js'

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

/** The frozen blocks of `parts` (their texts joined by a blank line), each a frozen plain object. */
export function blocksOf(parts: readonly RenderedPart[]): readonly PromptBlock[] {
  const ends = blockEnds(parts)
  let stableRun = ends.length
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    if (parts[start]!.stability === 'volatile') {
      stableRun = r
      break
    }
  }
  const blocks = new Array<PromptBlock>(ends.length)
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    const members = parts.slice(start, ends[r])
    blocks[r] = Object.freeze({
      text: members.length === 1 ? members[0]!.text : members.map((part) => part.text).join('\n\n'),
      parts: Object.freeze(members.map((part) => part.name)),
      stability: members[0]!.stability,
      cacheBreakpoint: r < stableRun && (members[members.length - 1]!.cacheBreakpoint || r === stableRun - 1),
    })
  }
  return Object.freeze(blocks)
}
