import type { AssembledSection } from '../../src/index.js'

// The oracle's required-section restore (docs/design.md, "Authoring safety"), written
// plainly and apart from src/assembly/required-sections.ts: it computes, for
// each required section, its slot (how many of the listener's other sections
// come before it), then lays the two lists out by slot.

/**
 * `registry`: the collected sections in registry order (fresh copies);
 * `base`: what the listener returned, or the complete section alone.
 * Returns the restored sections.
 */
export function restoreRequiredPlainly(
  registry: readonly (AssembledSection & { readonly required: boolean })[],
  base: readonly AssembledSection[],
): AssembledSection[] {
  const required = registry.filter((s) => s.required)
  if (required.length === 0) return [...base]
  const number = (name: string): number => required.findIndex((s) => s.name === name)
  const gap = (name: string): number | undefined => {
    const at = registry.findIndex((s) => s.name === name)
    return at < 0 || registry[at]!.required ? undefined : registry.slice(0, at).filter((s) => s.required).length
  }
  // Anchors: first item of a required name, numbered above every earlier anchor.
  const anchors = new Map<number, AssembledSection>()
  const anchorIndex = new Map<number, number>()
  let highest = -1
  base.forEach((item, index) => {
    const n = number(item.name)
    if (n > highest && !anchors.has(n)) {
      anchors.set(n, item)
      anchorIndex.set(n, index)
      highest = n
    }
  })
  const others = base.filter((item) => number(item.name) < 0)
  const othersBefore = (index: number) => base.slice(0, index).filter((item) => number(item.name) < 0).length
  const slots: number[] = []
  for (let n = 0; n < required.length; n++) {
    if (anchorIndex.has(n)) {
      slots.push(othersBefore(anchorIndex.get(n)!))
      continue
    }
    let slot = others.length
    for (let k = n === 0 ? 0 : slots[n - 1]!; k < others.length; k++) {
      const g = gap(others[k]!.name)
      if (g !== undefined && g > n) {
        slot = k
        break
      }
    }
    const nextAnchor = [...anchorIndex.keys()].filter((m) => m > n).sort((a, b) => a - b)[0]
    if (nextAnchor !== undefined) slot = Math.min(slot, othersBefore(anchorIndex.get(nextAnchor)!))
    slots.push(slot)
  }
  const pick = (n: number): AssembledSection => {
    const anchor = anchors.get(n)
    const collected = required[n]!
    const { required: _flag, ...section } = collected
    const same = anchor !== undefined && anchor.text === collected.text && (anchor.interpolate !== false) === (collected.interpolate !== false) && (anchor.complete === true) === (collected.complete === true)
    return same ? anchor : { ...section }
  }
  const out: AssembledSection[] = []
  let n = 0
  for (let k = 0; k <= others.length; k++) {
    while (n < required.length && slots[n] === k) out.push(pick(n++))
    if (k < others.length) out.push(others[k]!)
  }
  return out
}
