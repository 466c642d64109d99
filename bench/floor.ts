/**
 * Baselines that are not promptloom-vs-reference contests: the floor (a
 * Cordis service method running two empty waterfalls, the least an
 * assemble() of this shape costs) and what those two waterfalls cost when
 * nobody listens, against skipping them after `hasListeners` (what the
 * engine does since issue #13, src/assembly/pipeline.ts).
 */
import { Context, Service } from 'cordis'
import { hasListeners } from '../src/assembly/cordis-internals.js'
import { scopeTarget } from '../src/index.js'
import { compare, measure } from './measure.js'
import { report } from './report.js'

interface RawEvents {
  readonly _hooks: Readonly<Record<string | symbol, unknown>>
  waterfall(thisArg: object, name: string, ...args: unknown[]): unknown
}

const PREPARE = 'system-prompt/prepare'
const ASSEMBLE = 'system-prompt/assemble'

function rawEvents(ctx: Context): RawEvents {
  return (ctx.events as unknown as Record<symbol, RawEvents>)[Symbol.for('cordis.original')]!
}

// A symbol key: `this` in a service method is Cordis' proxy, where # fields fail.
const EVENTS = Symbol('events')

/** The least an assemble() of this shape can cost: a service method that runs two empty waterfalls. */
class Floor extends Service {
  readonly [EVENTS]: RawEvents
  constructor(ctx: Context) {
    super(ctx, 'floor')
    this[EVENTS] = rawEvents(ctx)
  }
  async assemble(context: { scope?: object } = {}): Promise<object> {
    const events = this[EVENTS]
    const carrier = scopeTarget(this, context.scope)
    const preparation = await events.waterfall(carrier, 'bench/prepare', {}, context, () => Promise.resolve({}))
    return events.waterfall(carrier, 'bench/assemble', preparation, context, () => Promise.resolve(preparation)) as Promise<object>
  }
}

/** Reports the floor: one call of `Floor.assemble` through the service proxy. */
export async function floorScenario(rounds: number, time: number): Promise<void> {
  const app = new Context()
  await app.plugin(Floor)
  const root = app as unknown as { floor: Floor }
  const key = {}
  const floor = await measure({ name: 'floor', fn: () => root.floor.assemble({ scope: key }) }, rounds, time)
  report({ scenario: 'floor: a Cordis service method running two empty waterfalls', promptloom_ms: floor, target: 'baseline', note: 'not a contender' })
}

/**
 * The prepare and assemble waterfalls as the engine runs them (scope carrier,
 * inner `() => Promise.resolve(value)`, awaited), with no listener anywhere,
 * against the same steps taking `hasListeners`' path: no waterfall, no await.
 */
export async function listenerSkipScenario(rounds: number, time: number): Promise<void> {
  const app = new Context()
  const events = rawEvents(app)
  const carrier = scopeTarget(app, { name: 'agent' })
  const context = {}
  const preparation = { variables: {}, contexts: [] }
  const presentation = { sections: [], variables: {}, contexts: [] }
  const waterfalls = async (): Promise<object> => {
    const prepared = (await events.waterfall(carrier, PREPARE, preparation, context, () => Promise.resolve(preparation))) as object
    void prepared
    return (await events.waterfall(carrier, ASSEMBLE, presentation, context, () => Promise.resolve(presentation))) as object
  }
  const skipping = async (): Promise<object> => {
    const prepared = hasListeners(events._hooks, PREPARE)
      ? ((await events.waterfall(carrier, PREPARE, preparation, context, () => Promise.resolve(preparation))) as object)
      : preparation
    void prepared
    return hasListeners(events._hooks, ASSEMBLE)
      ? ((await events.waterfall(carrier, ASSEMBLE, presentation, context, () => Promise.resolve(presentation))) as object)
      : presentation
  }
  if (hasListeners(events._hooks, PREPARE) || hasListeners(events._hooks, ASSEMBLE)) throw new Error('listener skip scenario: a listener exists')
  const result = await compare({ name: 'waterfalls', fn: waterfalls }, { name: 'skipping', fn: skipping }, rounds, time)
  const saved = (result.means.waterfalls! - result.means.skipping!) * 1000
  report({
    scenario: 'micro: prepare + assemble waterfalls nobody listens to (left) vs skipped after hasListeners() (right)',
    reference_ms: result.means.waterfalls,
    promptloom_ms: result.means.skipping,
    ratio: result.ratio,
    target: 'informational',
    note: `${saved.toFixed(2)} µs saved per assemble`,
  })
}
