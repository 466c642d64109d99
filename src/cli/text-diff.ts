import { isLowSurrogate, wholeCodePoints } from '../render/utf8.js'

/** One line of the diff; `mark` is the UTF-16 range `[start, end)` of `text` that differs from the line it replaces. */
export type DiffLine = Readonly<{ kind: 'same' | 'removed' | 'added'; text: string; mark?: readonly [number, number] }>

/** A run of unchanged lines left out of the diff. */
export type DiffGap = { readonly kind: 'gap'; readonly lines: number }

const CONTEXT = 2
/** Past this many line pairs the diff skips the subsequence: the changed middle shows whole, removals then additions. */
const LCS_LIMIT = 250_000

/** A line diff of two texts (`undefined`: none), unchanged runs folded to `CONTEXT` lines, changed characters marked. */
export function diffTexts(before: string | undefined, after: string | undefined): (DiffLine | DiffGap)[] {
  const a = before === undefined ? [] : before.split('\n')
  const b = after === undefined ? [] : after.split('\n')
  return folded(marked(lineDiff(a, b)))
}

/** The lengths of the common prefix of `a` and `b` and, after it, of their common suffix. */
function commonEnds(a: ArrayLike<string>, b: ArrayLike<string>): [head: number, tail: number] {
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  return [head, tail]
}

/** Lines by a longest common subsequence between the common ends: removals before additions at each point. */
function lineDiff(a: readonly string[], b: readonly string[]): DiffLine[] {
  const [head, tail] = commonEnds(a, b)
  const x = a.slice(head, a.length - tail)
  const y = b.slice(head, b.length - tail)
  const n = x.length
  const m = y.length
  const whole = n * m > LCS_LIMIT
  // lengths[i * (m + 1) + j]: the LCS length of x[i..] and y[j..].
  const lengths = new Uint32Array(whole ? 0 : (n + 1) * (m + 1))
  for (let i = n - 1; i >= 0 && !whole; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] = x[i] === y[j] ? lengths[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lengths[(i + 1) * (m + 1) + j]!, lengths[i * (m + 1) + j + 1]!)
    }
  }
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: 'same', text }))
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (!whole && i < n && j < m && x[i] === y[j]) {
      out.push({ kind: 'same', text: x[i++]! })
      j++
    } else if (j >= m || (i < n && (whole || lengths[(i + 1) * (m + 1) + j]! >= lengths[i * (m + 1) + j + 1]!))) {
      out.push({ kind: 'removed', text: x[i++]! })
    } else out.push({ kind: 'added', text: y[j++]! })
  }
  for (const text of a.slice(a.length - tail)) out.push({ kind: 'same', text })
  return out
}

/** Pairs each block of removed lines with the added block right after it, line by line, and marks what differs. */
function marked(lines: DiffLine[]): DiffLine[] {
  const runEnd = (from: number, kind: DiffLine['kind']): number => {
    while (from < lines.length && lines[from]!.kind === kind) from++
    return from
  }
  for (let start = 0; start < lines.length; ) {
    const split = runEnd(start, 'removed')
    const end = runEnd(split, 'added')
    for (let k = 0; k < Math.min(split - start, end - split); k++) {
      const [removed, added] = changedRanges(lines[start + k]!.text, lines[split + k]!.text)
      lines[start + k] = { ...lines[start + k]!, mark: removed }
      lines[split + k] = { ...lines[split + k]!, mark: added }
    }
    start = Math.max(end, start + 1)
  }
  return lines
}

const WORD = /[\p{L}\p{N}_]/u

/** The differing middles of two lines, widened to whole words (`main` → `feature/login`, not `ma` → `feature/log`). */
function changedRanges(a: string, b: string): [[number, number], [number, number]] {
  let [head, tail] = commonEnds(a, b)
  // The prefix and suffix are common, so widening them moves both ranges alike.
  while (head > 0 && WORD.test(a[head - 1]!)) head--
  while (tail > 0 && WORD.test(a[a.length - tail]!)) tail--
  // And to whole code points: two emoji may share a high or a low surrogate, and a half alone renders as U+FFFD.
  head = wholeCodePoints(a, b, head)
  if (tail > 0 && isLowSurrogate(a.charCodeAt(a.length - tail))) tail--
  return [[head, a.length - tail], [head, b.length - tail]]
}

function folded(lines: readonly DiffLine[]): (DiffLine | DiffGap)[] {
  const out: (DiffLine | DiffGap)[] = []
  lines.forEach((line, index) => {
    const last = out.at(-1)
    if (lines.slice(Math.max(0, index - CONTEXT), index + CONTEXT + 1).some((near) => near.kind !== 'same')) out.push(line)
    else if (last?.kind === 'gap') out[out.length - 1] = { kind: 'gap', lines: last.lines + 1 }
    else out.push({ kind: 'gap', lines: 1 })
  })
  return out
}
