/**
 * A plain counter (not a signal) that moves on every write to one family of
 * the signals the scope views read: a reader that remembers the count it saw
 * knows, by one comparison, that nothing in that family was written since.
 *
 * The views use it to answer a fact read without asking preact. A computed
 * nobody subscribes to (views are pulled, never pushed; see view.ts) checks
 * every source it read whenever *any* signal anywhere was written since its
 * last read, so a per-step signal in a section text or a registration in
 * another agent makes every fact of every view walk its sources again. With
 * a revision per family the views skip that walk for the families nothing
 * wrote to. Counting is conservative: every writer bumps, so one that
 * changed nothing a given view reads only costs that view an ordinary read.
 */
export class Revision {
  #count = 0

  /** The number of writes so far. */
  get count(): number {
    return this.#count
  }

  /** Records a write (SignalTable calls it before it notifies anyone; a writer of its own calls it too, never skipping one). */
  bump(): void {
    this.#count++
  }
}

/**
 * Moves whenever a scope gains or loses its layer (ScopedLayers) or a parent
 * link changes (parent-chain.ts): every fact of every view depends on both.
 */
export const structureRevision = new Revision()
