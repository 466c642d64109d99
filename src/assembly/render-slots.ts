import type { RenderSlot } from './provenance.js'
import type { PromptStats } from './stats.js'
import type { ScopeView } from './view.js'

/**
 * A view's render slot, with what the recency order needs under a finite
 * limit: a token that stands for the slot in the order (so the order keeps
 * no slot, and no render cache, alive) and a weak link back to its view.
 * Without a limit, neither.
 */
interface KeptSlot extends RenderSlot {
  readonly token?: object
  readonly view?: WeakRef<ScopeView>
}

/**
 * The render slots of the engine's views, of which at most `limit` are kept:
 * each `slotOf` makes its view the most recently used, and creating a slot
 * beyond the limit releases the least recently used view's slot (and so, once
 * no result assembled before still holds it, the render memos and last
 * `RenderedPrompt` the render layer keeps under it). A released view's next
 * assembly gets a fresh slot and renders from scratch: equal output, new
 * objects.
 *
 *     order   [a][b][c]   limit 3, d assembles:   [b][c][d]   a released
 *             ^ least recently used
 *
 * The order holds tokens and weak links only: a view collected while in it
 * leaves a small entry that is dropped when it comes up for release (at most
 * `limit` of them).
 */
export class RenderSlots {
  readonly #limit: number
  readonly #stats: PromptStats
  #slots = new WeakMap<ScopeView, KeptSlot>()
  /** Tokens in recency order, least recent first. */
  readonly #order = new Map<object, WeakRef<ScopeView>>()
  /** The token of the most recently used slot: stepping it again moves nothing. */
  #last: object | undefined = undefined
  /** How many slots were released for being least recently used (for tests and benchmarks). */
  released = 0

  constructor(limit: number, stats: PromptStats) {
    this.#limit = limit
    this.#stats = stats
  }

  /**
   * How many views currently keep a render slot under a finite limit
   * (counting views collected since, until their entry comes up); always 0
   * without a limit, which keeps no order.
   */
  get kept(): number {
    return this.#order.size
  }

  /** The render slot of `view`, created on first use (and after a release); makes `view` the most recently used. */
  slotOf(view: ScopeView): RenderSlot {
    const slot = this.#slots.get(view)
    if (slot !== undefined) {
      // Without a limit nothing is ordered; already the most recent (a loop stepping one scope): nothing to move.
      const { token, view: ref } = slot
      if (token !== undefined && ref !== undefined && this.#last !== token) {
        this.#order.delete(token)
        this.#order.set(token, ref)
        this.#last = token
      }
      return slot
    }
    // Without a limit there is no order to keep (and so no entry to outlive a collected view).
    if (this.#limit === Infinity) {
      const plain: KeptSlot = { stats: this.#stats }
      this.#slots.set(view, plain)
      return plain
    }
    const token = {}
    const ref = new WeakRef(view)
    const created: KeptSlot = { stats: this.#stats, token, view: ref }
    this.#slots.set(view, created)
    this.#order.set(token, ref)
    this.#last = token
    if (this.#order.size > this.#limit) this.#releaseOldest()
    return created
  }

  #releaseOldest(): void {
    const [token, ref] = this.#order.entries().next().value!
    this.#order.delete(token)
    const view = ref.deref()
    if (view !== undefined && this.#slots.get(view)?.token === token) {
      this.#slots.delete(view)
      this.released++
    }
  }

  /** Drops the slot of `view` (its scope was released). */
  delete(view: ScopeView): void {
    const slot = this.#slots.get(view)
    if (slot === undefined) return
    this.#slots.delete(view)
    if (slot.token === undefined) return
    this.#order.delete(slot.token)
    if (this.#last === slot.token) this.#last = undefined
  }

  /** Drops every slot (a new generation of views). */
  clear(): void {
    this.#slots = new WeakMap()
    this.#order.clear()
    this.#last = undefined
  }
}
