/**
 * The cache blocks of a rendered prompt (SPEC §4.1). A block ends after every
 * `cacheBreakpoint` part and wherever the stability changes. The blocks before
 * the first volatile one form the stable run; a block is a breakpoint when it
 * lies in the stable run and ends with a `cacheBreakpoint` part or ends the run
 * (a marker after volatile bytes could only pay for cache writes):
 *
 *   parts   [a][b*][c]  [d~][e*][f]        * cacheBreakpoint   ~ volatile
 *   blocks  [a b]* [c]*  [d]  [e]  [f]     e gets no marker: its prefix holds d
 *           └── stable run ─┘
 *
 * A new block's text is concatenated, not joined: V8 keeps it as a rope over
 * the part texts, so a step pays only for the texts it reads (docs/design.md).
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

/** The frozen blocks of `parts`; a block equal to `previous`'s at the same position is that block. */
export function blocksOf(parts: readonly RenderedPart[], previous?: RenderedPrompt): readonly PromptBlock[] {
  const ends = blockEnds(parts)
  const firstVolatile = ends.findIndex((_, r) => parts[r === 0 ? 0 : ends[r - 1]!]!.stability === 'volatile')
  const stableRun = firstVolatile < 0 ? ends.length : firstVolatile
  const blocks = new Array<PromptBlock>(ends.length)
  // Where the previous prompt's block r starts in its parts.
  let at = 0
  for (let r = 0, start = 0; r < ends.length; start = ends[r++]!) {
    const end = ends[r]!
    const { stability } = parts[start]!
    const cacheBreakpoint = r < stableRun && (parts[end - 1]!.cacheBreakpoint || r === stableRun - 1)
    const old = previous?.blocks[r]
    // The same block: the same flags over parts of the same names and texts.
    let same = old?.stability === stability && old.cacheBreakpoint === cacheBreakpoint && old.parts.length === end - start
    for (let j = start; same && j < end; j++) {
      const was = previous!.parts[at + j - start]
      same = was === parts[j] || (was !== undefined && was.name === parts[j]!.name && was.text === parts[j]!.text)
    }
    if (same) blocks[r] = old!
    else {
      let text = parts[start]!.text
      const names = new Array<string>(end - start)
      for (let j = start; j < end; j++) {
        if (j > start) text = text + PART_SEPARATOR + parts[j]!.text
        names[j - start] = parts[j]!.name
      }
      blocks[r] = Object.freeze({ text, parts: Object.freeze(names), stability, cacheBreakpoint })
    }
    at += old?.parts.length ?? 0
  }
  return Object.freeze(blocks)
}
