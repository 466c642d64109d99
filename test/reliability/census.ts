import type { Context } from 'cordis'

// A head count of what Cordis holds for an app: live fibers (plugins, scopes),
// their top-level effects by label, and event listeners by event name. Read
// through Cordis' internals on purpose (`registry` runtimes, `fiber.getEffects()`,
// `events._hooks`): a leak shows up here as a count that only grows.
// Shared by test/reliability/leaks.test.ts and bench/soak.ts.

interface FiberLike {
  getEffects(): { label: string }[]
}

interface RuntimeLike {
  readonly name?: string
  readonly fibers: Iterable<FiberLike>
}

/** What Cordis holds for an app at one moment. */
export interface Census {
  /** Live fibers, the root included. */
  readonly fibers: number
  /** Live fibers minted by `createScope`. */
  readonly scopeFibers: number
  /** Top-level effects of every live fiber (listeners and registrations are effects too). */
  readonly effects: number
  /** Event listeners across every event name. */
  readonly listeners: number
  /** Effects by label, e.g. `systemPrompt.section()`: 3. */
  readonly effectLabels: Readonly<Record<string, number>>
  /** Listeners by event name. */
  readonly listenerNames: Readonly<Record<string, number>>
}

/** Counts the live fibers, effects and listeners of `app` (the root context). */
export function census(app: Context): Census {
  const effectLabels: Record<string, number> = {}
  let fibers = 0
  let scopeFibers = 0
  let effects = 0
  const visit = (fiber: FiberLike): void => {
    fibers++
    for (const { label } of fiber.getEffects()) {
      effects++
      effectLabels[label] = (effectLabels[label] ?? 0) + 1
    }
  }
  visit(app.fiber as unknown as FiberLike)
  for (const runtime of (app.registry as unknown as { values(): Iterable<RuntimeLike> }).values()) {
    for (const fiber of runtime.fibers) {
      visit(fiber)
      if (runtime.name === 'scope') scopeFibers++
    }
  }
  const listenerNames: Record<string, number> = {}
  let listeners = 0
  const hooks = (app.events as unknown as { _hooks: Record<string, unknown[]> })._hooks
  for (const [name, list] of Object.entries(hooks)) {
    listeners += list.length
    listenerNames[name] = list.length
  }
  return { fibers, scopeFibers, effects, listeners, effectLabels, listenerNames }
}

/** `after - before` per label or name, keeping only the non-zero differences. */
export function growth(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const change = (after[key] ?? 0) - (before[key] ?? 0)
    if (change !== 0) out[key] = change
  }
  return out
}
