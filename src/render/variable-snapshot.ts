/**
 * The variable values a render memo last rendered with, kept compactly: the
 * own names of the variables record in order (one array shared by every
 * snapshot of the same names, so a scope's section and context memos, and
 * every agent with the same variable names, hold one) and a parallel array of
 * values. It replaces a `Map` per memo (~490 bytes for 13 variables, against
 * ~120 for the values array), which every live agent held twice.
 *
 * A record whose own names come in the snapshot's order (the common case: the
 * engine builds each step's record in plan order) is diffed in one pass;
 * any other order falls back to a lookup by name.
 */

type Variables = Readonly<Record<string, string | undefined>>

const NO_NAMES: readonly string[] = Object.freeze([])
const NO_VALUES: readonly (string | undefined)[] = Object.freeze([])
/** Past 32 names a misaligned diff looks names up in a map instead of scanning. */
const SCAN_LIMIT = 32

/** The last names array a snapshot committed: the next one with the same names reuses it. */
let sharedNames: readonly string[] = NO_NAMES

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** A snapshot of one variables record: which names it had, in order, and their values. */
export class VariableSnapshot {
  #names: readonly string[] = NO_NAMES
  #values: readonly (string | undefined)[] = NO_VALUES
  #index: Map<string, number> | undefined

  #indexOf(name: string): number {
    const names = this.#names
    if (names.length <= SCAN_LIMIT) return names.indexOf(name)
    if (this.#index === undefined) {
      this.#index = new Map()
      for (let i = 0; i < names.length; i++) this.#index.set(names[i]!, i)
    }
    return this.#index.get(name) ?? -1
  }

  /**
   * The names whose value or presence differs between `variables` and the
   * snapshot (an own name that is new, gone, or holds another value), or
   * `null` when none does.
   */
  changed(variables: Variables): Set<string> | null {
    const names = this.#names
    const values = this.#values
    let changed: Set<string> | null = null
    let aligned = true
    let own = 0
    for (const name in variables) {
      if (!Object.hasOwn(variables, name)) continue
      const value = variables[name]
      if (aligned && own < names.length && names[own] === name) {
        if (values[own] !== value) (changed ??= new Set()).add(name)
      } else {
        aligned = false
        const at = this.#indexOf(name)
        if (at < 0 || values[at] !== value) (changed ??= new Set()).add(name)
      }
      own++
    }
    if (!aligned || own !== names.length) {
      for (const name of names) if (!Object.hasOwn(variables, name)) (changed ??= new Set()).add(name)
    }
    return changed
  }

  /** Takes `variables` as the snapshot. */
  commit(variables: Variables): void {
    const names: string[] = []
    const values: (string | undefined)[] = []
    for (const name in variables) {
      if (!Object.hasOwn(variables, name)) continue
      names.push(name)
      values.push(variables[name])
    }
    if (!sameNames(names, this.#names)) {
      if (!sameNames(names, sharedNames)) sharedNames = Object.freeze(names.slice())
      this.#names = sharedNames
      this.#index = undefined
    }
    // Exactly as long as needed (a pushed-to array keeps spare room).
    this.#values = values.length === 0 ? NO_VALUES : values.slice()
  }
}
