import type { RenderSlot } from './provenance.js'
import type { PromptStats } from './stats.js'
import type { ScopeView } from './view.js'

/**
 * A view's render slot; under a finite limit also a token that stands for it in the recency order
 * (so the order keeps no slot, and no render cache, alive) and a weak link back to its view.
 */
interface KeptSlot extends RenderSlot {
  readonly token?: object
  readonly view?: WeakRef<ScopeView>
}

/**
 * The render slots of the engine's views, of which at most `limit` are kept: `slotOf` makes its view
 * the most recently used, and a slot beyond the limit releases the least recently used view's (and
 * with it the render memos kept under it). A released view's next assembly renders from scratch:
 * equal output, new objects.
 *
 *     order   [a][b][c]   limit 3, d assembles:   [b][c][d]   a released
 *             ^ least recently used
 *
 * A view collected while in the order leaves a small entry, dropped when it comes up for release.
 */
export class RenderSlots {
  readonly #limit: number
  readonly #stats: PromptStats
  #slots = new WeakMap<ScopeView, KeptSlot>()
  /** Tokens in recency order, least recent first. */
  readonly #order = new Map<object, WeakRef<ScopeView>>()
  /** The token of the most recently used slot: stepping it again moves nothing. */
  #last: object | undefined = undefined
  /** How many slots were released for being least recently used. */
  released = 0

  constructor(limit: number, stats: PromptStats) {
    this.#limit = limit
    this.#stats = stats
  }

  /** How many views keep a slot under a finite limit (counting collected ones until they come up); 0 without a limit. */
  get kept(): number {
    return this.#order.size
  }

  /** The render slot of `view`, created on first use (and after a release); makes `view` the most recently used. */
  slotOf(view: ScopeView): RenderSlot {
    let slot = this.#slots.get(view)
    if (slot === undefined) {
      slot = this.#limit === Infinity ? { stats: this.#stats } : { stats: this.#stats, token: {}, view: new WeakRef(view) }
      this.#slots.set(view, slot)
    }
    const { token, view: ref } = slot
    // Without a limit nothing is ordered; a loop stepping the same scope again moves nothing.
    if (token === undefined || ref === undefined || this.#last === token) return slot
    this.#order.delete(token)
    this.#order.set(token, ref)
    this.#last = token
    if (this.#order.size > this.#limit) this.#releaseOldest()
    return slot
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
