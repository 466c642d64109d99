import type { Template } from '../assembly/template.js'
import { filledFor, ownerOf, templateOf, touches, type RenderKey, type RenderOwner } from './shared-templates.js'
import type { PromptStats } from '../assembly/stats.js'
import { VariableSnapshot } from './variable-snapshot.js'
import { ReferenceCounts } from './reference-counts.js'
import { entryEditsOf, renderListed, withEdits, type EntryEdits } from './entry-edits.js'

type Variables = Readonly<Record<string, string | undefined>>

/** Five arrays of `count` slots, the first `kept` copied from the given ones. */
function sized(
  count: number,
  kept: number,
  names: readonly string[],
  texts: readonly string[],
  interpolates: readonly boolean[],
  templates: readonly (Template | undefined)[],
  outputs: readonly string[],
): { names: string[]; texts: string[]; interpolates: boolean[]; templates: (Template | undefined)[]; outputs: string[] } {
  const next = {
    names: new Array<string>(count),
    texts: new Array<string>(count),
    interpolates: new Array<boolean>(count),
    templates: new Array<Template | undefined>(count),
    outputs: new Array<string>(count),
  }
  for (let i = 0; i < kept; i++) {
    next.names[i] = names[i]!
    next.texts[i] = texts[i]!
    next.interpolates[i] = interpolates[i]!
    next.templates[i] = templates[i]
    next.outputs[i] = outputs[i]!
  }
  return next
}

/**
 * The last render of one scope's sections (or contexts), in parallel arrays
 * indexed by position. An item whose name, text and interpolation flag match
 * the memo (at its position, or by name after a move) reuses its output
 * without scanning; if one of its referenced variables changed value since
 * the last render, it is re-substituted from its compiled template; only a
 * changed text is scanned again.
 *
 * Which variables changed is found once per render, by diffing the variables
 * record against a snapshot of the last one, so an unchanged section costs a
 * few identity comparisons however many references it has. A render that
 * throws leaves the memo as it was: nothing is committed until the end.
 *
 * Plan entries (`given` texts) after plan entries are compared by identity
 * (entry-edits.ts): the same entries, or a few removed and inserted, cost a
 * pass of identity comparisons, a render of the listed slots and a bulk copy
 * of the arrays that changed, with no read of a kept entry.
 */
export class RenderMemo {
  // Names and flags: `undefined` after an edits commit, which leaves them to the entries (see `#keys`).
  #names: readonly string[] | undefined = []
  #texts: readonly string[] = []
  #interpolates: readonly boolean[] | undefined = []
  #templates: (Template | undefined)[] = []
  #outputs: string[] = []
  #byName: Map<string, number> | undefined
  /** The registrations (immutable entries, `given` texts) the slots were last committed from, by position: the same entry has the same name and flag. */
  #entries: readonly unknown[] | undefined
  readonly #snapshot = new VariableSnapshot()
  /** Moves whenever an output, name or template changes: what the renderer's derived caches compare. */
  version = 0
  /** The joined text of the current outputs, cached by the renderer; cleared whenever an output changes. */
  joined: string | undefined

  /** The item names of the last successful render, by position (an array that is replaced, never written). */
  get names(): readonly string[] {
    return this.#keys().names
  }

  /**
   * The names and flags of the current slots. An edits commit leaves them to
   * its entries (a registration's name and flag are its own), so a step that
   * only joins the outputs copies neither; the first read builds them.
   */
  #keys(): { readonly names: readonly string[]; readonly interpolates: readonly boolean[] } {
    if (this.#names === undefined || this.#interpolates === undefined) {
      const entries = this.#entries as readonly RenderKey[]
      const names = new Array<string>(entries.length)
      const interpolates = new Array<boolean>(entries.length)
      for (let i = 0; i < entries.length; i++) {
        names[i] = entries[i]!.name
        interpolates[i] = entries[i]!.interpolate !== false
      }
      this.#names = names
      this.#interpolates = interpolates
    }
    return { names: this.#names, interpolates: this.#interpolates }
  }

  /**
   * The names of the current commit, read when the returned function is
   * called (later, or never: a prompt whose parts nobody builds needs none),
   * as they were at this commit.
   */
  namesReader(): () => readonly string[] {
    const names = this.#names
    if (names !== undefined) return () => names
    const entries = this.#entries as readonly RenderKey[]
    const commits = this.commits
    let read: readonly string[] | undefined
    return () => (read ??= this.commits === commits ? this.names : entries.map((entry) => entry.name))
  }

  /** The item texts of the last successful render, by position (replaced, never written). */
  get texts(): readonly string[] {
    return this.#texts
  }

  /** The outputs of the last successful render, by position. */
  get outputs(): readonly string[] {
    return this.#outputs
  }

  #referenced: { readonly templates: readonly (Template | undefined)[]; readonly names: readonly string[] } | undefined
  /** Kept up to date by every commit once `referenced` was first read (see reference-counts.ts). */
  #refCounts: ReferenceCounts | undefined

  /** The distinct variable names the current templates reference (in no particular order): all a repeat render's outputs depend on besides the texts. */
  get referenced(): readonly string[] {
    // The templates array is replaced, never written, so its identity says whether the names can differ (a re-fill keeps it).
    if (this.#referenced?.templates === this.#templates) return this.#referenced.names
    this.#refCounts ??= ReferenceCounts.of(this.#templates)
    this.#referenced = { templates: this.#templates, names: this.#refCounts.names() }
    return this.#referenced.names
  }

  /** Successful renders so far: a derived value made right after render `n` may trust `changed` of render `n + 1`. */
  commits = 0
  /**
   * The variables whose value or presence the last successful render found
   * changed against the one before it (`null`: none). A slot whose template
   * references none of them holds exactly the values it held then.
   */
  changed: ReadonlySet<string> | null = null
  /**
   * The first position the last successful render changed: before it, every
   * slot is the previous commit's at the same position, with the same
   * output and values (not re-filled).
   */
  firstChange = 0

  /** The compiled templates of the last successful render, by position (`undefined`: no references). */
  get templates(): readonly (Template | undefined)[] {
    return this.#templates
  }

  /**
   * The slot of `name`: a few slots around `near` first (one removal or
   * insertion shifts every later item by one); by a map of all names only
   * once the window missed more than twice in this render (`misses`), so a
   * new item or two does not cost a map of G names per changed step.
   */
  #indexOf(name: string, near: number, misses: { n: number }): number {
    const names = this.#names!
    if (this.#byName === undefined) {
      for (let j = Math.max(0, near - 1), end = Math.min(names.length, near + 4); j < end; j++) if (names[j] === name) return j
      if (++misses.n <= 2) return -1
    }
    if (this.#byName === undefined) {
      this.#byName = new Map()
      for (let i = 0; i < names.length; i++) this.#byName.set(names[i]!, i)
    }
    return this.#byName.get(name) ?? -1
  }

  /**
   * Renders `items` against `variables`, reusing what it can; when an output
   * changed, `joined` is cleared and `version` moves. With `given`, item `i`'s
   * text is `given[i]` and the items are registrations (immutable entries):
   * their compiled templates and filled outputs are shared with every other
   * view that renders them with the same values. `dynamic` (with `given`)
   * lists, ascending, the positions whose text can differ from the one the
   * same entry had last time (a plan's signal and function sections): the
   * other texts are not compared.
   */
  render(
    items: readonly (RenderKey & { readonly text?: string })[],
    given: readonly string[] | undefined,
    variables: Variables,
    kind: RenderOwner,
    stats: PromptStats | undefined,
    dynamic?: readonly number[],
  ): void {
    const texts = this.#texts
    const templates = this.#templates
    const outputs = this.#outputs
    const changed = this.#snapshot.changed(variables)
    const count = items.length
    if (given !== undefined && this.#entries !== undefined) {
      // Plan entries again: the same ones, or a few removed and inserted, are applied as edits, without visiting the kept slots' items.
      const edits = entryEditsOf(this.#entries, items, texts, templates, given, changed, dynamic)
      if (edits !== undefined) return this.#commitEdits(edits, items, given, variables, changed, kind, stats)
    }
    const { names, interpolates } = this.#keys()
    // Copy-on-first-difference, in two grades: while every item keeps its
    // slot (same name at the same position), only a changed output is
    // written, into a copy of `outputs`, and a changed text or flag into
    // copies of `texts`, `interpolates` and `templates` (`names` is kept);
    // the first item that moved or is new switches to rebuilding all five
    // arrays.
    let nextOutputs: string[] | undefined
    let edited: { texts: string[]; interpolates: boolean[]; templates: (Template | undefined)[]; at: number[] } | undefined
    // Rebuilt arrays are made exactly `count` long (a pushed-to array keeps up to half again as spare room, per scope).
    let next: { names: string[]; texts: string[]; interpolates: boolean[]; templates: (Template | undefined)[]; outputs: string[] } | undefined =
      count === names.length ? undefined : sized(count, 0, names, texts, interpolates, templates, outputs)
    // Each rebuilt slot's old slot (-1: new), while reference counts are kept.
    let from: Int32Array | undefined = next !== undefined && this.#refCounts !== undefined ? new Int32Array(count) : undefined
    let renders = 0
    let shift = 0
    const misses = { n: 0 }
    // A re-filled template whose output came out the same still moved its
    // substituted values (`{{p}}{{q}}`: "a"+"" then ""+"a"): parts must follow.
    let refilled = false
    let firstChange = count
    for (let i = 0; i < count; i++) {
      const item = items[i]!
      const { name } = item
      const text = given === undefined ? item.text! : given[i]!
      const owner = given === undefined ? undefined : item
      const interpolate = item.interpolate !== false
      // Where the last slot was found, the next one most likely follows (after an insertion or removal, every later item is one off).
      let at = names[i + shift] === name ? i + shift : this.#indexOf(name, i + shift, misses)
      if (at >= 0) shift = at - i
      let template: Template | undefined
      let output: string
      let retexted = false
      if (at >= 0 && texts[at] === text && interpolates[at] === interpolate) {
        template = templates[at]
        if (template !== undefined && changed !== null && touches(template, changed)) {
          output = filledFor(owner, template, variables, () => ownerOf(kind, name))
          renders++
          refilled = true
          if (firstChange === count) firstChange = i
        } else output = outputs[at]!
      } else {
        template = templateOf(owner, name, text, interpolate, kind)
        output = template === undefined ? text : filledFor(owner, template, variables, () => ownerOf(kind, name))
        renders++
        retexted = at === i
        at = -1
      }
      if (at !== i && firstChange === count) firstChange = i
      if (next === undefined) {
        if (at === i) {
          if (output !== outputs[i]) {
            ;(nextOutputs ??= outputs.slice())[i] = output
            if (firstChange === count) firstChange = i
          }
          continue
        }
        if (retexted) {
          edited ??= { texts: texts.slice(), interpolates: interpolates.slice(), templates: templates.slice(), at: [] }
          edited.texts[i] = text
          edited.interpolates[i] = interpolate
          edited.templates[i] = template
          edited.at.push(i)
          if (output !== outputs[i]) (nextOutputs ??= outputs.slice())[i] = output
          continue
        }
        next = sized(count, i, names, edited?.texts ?? texts, edited?.interpolates ?? interpolates, edited?.templates ?? templates, nextOutputs ?? outputs)
        if (this.#refCounts !== undefined) {
          from = new Int32Array(count)
          for (let j = 0; j < i; j++) from[j] = j
          // A slot whose text changed holds a new template: its old one goes, like a removed slot's.
          if (edited !== undefined) for (const j of edited.at) from[j] = -1
        }
      }
      if (from !== undefined) from[i] = at
      next.names[i] = name
      next.texts[i] = text
      next.interpolates[i] = interpolate
      next.templates[i] = template
      next.outputs[i] = output
    }
    if (stats !== undefined) {
      stats.sectionRenders += renders
      stats.renderCacheHits += count - renders
    }
    if (changed !== null) this.#snapshot.commit(variables)
    this.changed = changed
    this.firstChange = firstChange
    this.#entries = given === undefined ? undefined : items
    this.commits++
    if (next === undefined) {
      if (edited !== undefined) {
        if (this.#refCounts !== undefined) for (const j of edited.at) this.#refCounts.move(templates[j], edited.templates[j])
        this.#texts = edited.texts
        this.#interpolates = edited.interpolates
        this.#templates = edited.templates
      }
      if (nextOutputs === undefined) {
        // Same outputs (the joined text stays valid), but the values inside them, or the templates, moved.
        if (refilled || edited !== undefined) this.version++
        return
      }
      this.#outputs = nextOutputs
      this.version++
      this.joined = undefined
      return
    }
    if (from !== undefined) this.#refCounts!.recount(from, templates, next.templates)
    this.#names = next.names
    this.#texts = next.texts
    this.#interpolates = next.interpolates
    this.#templates = next.templates
    this.#outputs = next.outputs
    this.#byName = undefined
    this.version++
    this.joined = undefined
  }

  /**
   * Commits `edits` (from `entryEditsOf`: some removed or inserted entries)
   * as a render: only the listed slots are rendered, the kept ones move
   * with their outputs, and the reference counts follow the removed and
   * rendered slots alone.
   */
  #commitEdits(
    edits: EntryEdits,
    items: readonly RenderKey[],
    given: readonly string[],
    variables: Variables,
    changed: ReadonlySet<string> | null,
    kind: RenderOwner,
    stats: PromptStats | undefined,
  ): void {
    const { removed, at, from } = edits
    const templates = this.#templates
    const count = items.length
    // Everything that can throw comes before the first write.
    const { templates: rendered, outputs } = renderListed(edits, items, given, this.#texts, templates, variables, kind)
    if (stats !== undefined) {
      stats.sectionRenders += at.length
      stats.renderCacheHits += count - at.length
    }
    if (this.#refCounts !== undefined) {
      for (const j of removed) this.#refCounts.move(templates[j], undefined)
      for (let k = 0; k < at.length; k++) {
        const before = from[k]! >= 0 ? templates[from[k]!] : undefined
        if (before !== rendered[k]) this.#refCounts.move(before, rendered[k])
      }
    }
    if (changed !== null) this.#snapshot.commit(variables)
    this.changed = changed
    this.firstChange = Math.min(removed[0] ?? count, at[0] ?? count)
    this.#entries = items
    this.commits++
    // The collected texts are read-only and shared (the assembly copies before it changes one): they are the slots' texts.
    this.#texts = given
    if (removed.length === 0 && !from.includes(-1)) {
      // Every slot kept its position: only the listed ones' templates and outputs can differ.
      let outputsMoved = false
      let templatesMoved = false
      for (let k = 0; k < at.length; k++) {
        outputsMoved ||= outputs[k] !== this.#outputs[at[k]!]
        templatesMoved ||= rendered[k] !== templates[at[k]!]
      }
      if (templatesMoved) this.#templates = withEdits(templates, edits, rendered)
      if (outputsMoved) {
        this.#outputs = withEdits(this.#outputs, edits, outputs)
        this.joined = undefined
      }
      // A re-fill with the same output still moved the values inside it (`{{p}}{{q}}`: "a"+"" then ""+"a"): parts must follow.
      if (at.length > 0) this.version++
      return
    }
    // The new entries hold the names and flags (`#keys` builds the arrays on demand).
    this.#names = undefined
    this.#interpolates = undefined
    this.#templates = withEdits(templates, edits, rendered)
    this.#outputs = withEdits(this.#outputs, edits, outputs)
    this.#byName = undefined
    this.version++
    this.joined = undefined
  }
}
