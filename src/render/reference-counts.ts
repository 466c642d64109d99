/**
 * How many references to each variable name a render memo's templates hold,
 * so the distinct names (`RenderMemo.referenced`, what an unchanged deferred
 * render compares) follow a changed step by what it added and removed
 * instead of a visit of G templates.
 *
 *     before  [a:{{x}}][b][c:{{x}} {{y}}]      x: 2, y: 1
 *     after   [a:{{x}}][c:{{x}} {{y}}][d:{{z}}] b kept nothing, d adds z: x: 2, y: 1, z: 1
 */

import type { Template } from '../assembly/template.js'

/** Occurrence counts of the names a list of templates references; a name with none is absent. */
export class ReferenceCounts {
  readonly #counts = new Map<string, number>()

  /** The counts of `templates` (`undefined`: a slot without references). */
  static of(templates: readonly (Template | undefined)[]): ReferenceCounts {
    const counts = new ReferenceCounts()
    for (const template of templates) counts.#add(template)
    return counts
  }

  /** The names with at least one reference, in no particular order. */
  names(): readonly string[] {
    return [...this.#counts.keys()]
  }

  #add(template: Template | undefined): void {
    if (template === undefined) return
    for (const ref of template.refs) this.#counts.set(ref, (this.#counts.get(ref) ?? 0) + 1)
  }

  #drop(template: Template | undefined): void {
    if (template === undefined) return
    for (const ref of template.refs) {
      const left = this.#counts.get(ref)! - 1
      if (left === 0) this.#counts.delete(ref)
      else this.#counts.set(ref, left)
    }
  }

  /** One slot's template changed from `before` to `after`. */
  move(before: Template | undefined, after: Template | undefined): void {
    this.#add(after)
    this.#drop(before)
  }

  /**
   * The slots went from `before` to `after`, where slot `i` of `after` is
   * slot `from[i]` of `before` with the same template (-1: a new slot). An
   * old slot kept by a second item too (two items of one name) counts that
   * item as new, so the counts never fall short; unkept old slots are dropped.
   */
  recount(from: Int32Array, before: readonly (Template | undefined)[], after: readonly (Template | undefined)[]): void {
    const kept = new Uint8Array(before.length)
    for (let i = 0; i < after.length; i++) {
      const j = from[i]!
      if (j >= 0 && kept[j] === 0) kept[j] = 1
      else this.#add(after[i])
    }
    for (let j = 0; j < before.length; j++) if (kept[j] === 0) this.#drop(before[j])
  }
}
