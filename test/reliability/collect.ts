import v8 from 'node:v8'
import vm from 'node:vm'

// Forced collection for the retention and leak tests: a WeakRef to what must
// not be retained, and a few full GCs between turns of the event loop.

/** A full GC: the one `--expose-gc` gives, else one exposed at run time. */
export const gc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc') as () => void)

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 2))

/** How many of `refs` are collected within `rounds` forced GCs (stops early once all are). */
export async function collectedCount(refs: readonly WeakRef<object>[], rounds = 20): Promise<number> {
  let dead = 0
  for (let i = 0; i < rounds && dead < refs.length; i++) {
    // deref() keeps its target alive until the current job ends, so let the job end first.
    await tick()
    gc()
    await tick()
    dead = refs.filter((ref) => ref.deref() === undefined).length
  }
  return dead
}

/** Whether `ref`'s target is collected within `rounds` forced GCs. */
export async function isCollected(ref: WeakRef<object>, rounds = 20): Promise<boolean> {
  return (await collectedCount([ref], rounds)) === 1
}
