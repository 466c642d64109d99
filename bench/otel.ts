/**
 * `npm run bench:otel` — what `withTracing` adds to an unchanged step, side
 * by side in one process (bench/measure.ts: alternating batches, the median
 * of per-round ratios), in the realistic world of bench/workload.ts:
 *
 *   no-op tracer     no provider registered, so the default tracer's spans do
 *                    not record: the wrapper, a non-recording span, no
 *                    attributes computed. Target ≤ 1.05× the plain step.
 *   throwing tracer  startSpan throws: after the first fault the surface
 *                    stops calling it. Target ≤ 1.05×.
 *   in-memory SDK    the real SDK with its InMemorySpanExporter behind a
 *                    BatchSpanProcessor (what production uses) or a
 *                    SimpleSpanProcessor (one export per span): every
 *                    attribute computed and every span exported. Reported,
 *                    no target.
 *
 * Each row steps the same agent's assembly on two surfaces, one plain and
 * one traced: `step()` alone (the assembly held, as the harshest
 * denominator), the loop's step (`assemble()` then `step()`), and a changed
 * step (the agent's late notes section is rewritten before every step, so
 * each surface sees a new prompt each time). `-- --quick`
 * runs fewer, shorter rounds; `-- --only=TEXT` only the rows whose scenario
 * contains TEXT.
 */
import { trace, type Tracer } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createStepSurface, type PromptAssembly, type StepSurface } from '../src/index.js'
import { withTracing } from '../src/otel.js'
import { compare } from './measure.js'
import { buildWorld, promptloom } from './workload.js'

const quick = process.argv.includes('--quick')
// Many short rounds: the traced and plain steps differ by less than the machine's noise between batches.
const ROUNDS = quick ? 7 : 21
const TIME = quick ? 30 : 50
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length)

interface Row {
  readonly scenario: string
  readonly plain: number
  readonly traced: number
  readonly ratio: number
  readonly target?: number
}

const rows: Row[] = []

function fmt(ms: number): string {
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`
}

const throwing = {
  startSpan(): never {
    throw new Error('exporter down')
  },
  startActiveSpan(): never {
    throw new Error('exporter down')
  },
} as unknown as Tracer

/** A tracer of the real SDK exporting to memory, and what empties the exporter now and then so memory stays flat. */
function inMemorySdk(processor: 'batch' | 'simple'): { tracer: Tracer; drain: () => void } {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [processor === 'batch' ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter)] })
  let spans = 0
  return {
    tracer: provider.getTracer('promptloom'),
    drain: () => {
      if (++spans % 1000 === 0) exporter.reset()
    },
  }
}

type Mode = 'step' | 'loop' | 'changed'

const MODES: Record<Mode, string> = {
  step: 'step() alone',
  loop: 'assemble() + step()',
  changed: 'a late section changed, assemble() + step()',
}

async function row(G: number, label: string, tracer: Tracer | undefined, drain: () => void, mode: Mode, target?: number): Promise<void> {
  const scenario = `${label}, ${MODES[mode]}, G=${G}`
  if (only !== undefined && !scenario.includes(only)) return
  const w = await buildWorld(promptloom, { G, A: 1 })
  const agent = w.agents[0]!
  const service = w.impl.service(w.ctx)
  const held: PromptAssembly = await service.assemble({ scope: agent.key })
  const plain = createStepSurface()
  const traced = withTracing(createStepSurface(), tracer === undefined ? { agent: 'agent-1' } : { tracer, agent: 'agent-1' })
  let turn = 0
  const stepper = (surface: StepSurface, after: () => void) =>
    mode !== 'step'
      ? async () => {
          if (mode === 'changed') agent.notes.value = `Progress note ${++turn}.`
          const result = surface.step({ assembly: await service.assemble({ scope: agent.key }) })
          after()
          return result.step
        }
      : () => {
          const result = surface.step({ assembly: held })
          after()
          return result.step
        }
  const plainStep = stepper(plain, () => {})
  const tracedStep = stepper(traced, drain)
  for (let i = 0; i < 50; i++) {
    await plainStep()
    await tracedStep()
  }
  const result = await compare({ name: 'traced', fn: tracedStep }, { name: 'plain', fn: plainStep }, ROUNDS, TIME)
  traced.end()
  await w.dispose()
  const measured: Row = { scenario, plain: result.means.plain!, traced: result.means.traced!, ratio: result.ratio, ...(target === undefined ? {} : { target }) }
  rows.push(measured)
  process.stdout.write(`${JSON.stringify(measured)}\n`)
}

const none = () => {}
for (const G of [10, 100]) {
  for (const mode of ['step', 'loop', 'changed'] as const) {
    // The target is for an unchanged step; a changed step's figure is reported.
    const target = mode === 'changed' ? undefined : 1.05
    await row(G, 'no-op tracer (no provider registered)', undefined, none, mode, target)
    await row(G, 'throwing tracer', throwing, none, mode, target)
    for (const processor of ['batch', 'simple'] as const) {
      const sdk = inMemorySdk(processor)
      await row(G, `in-memory SDK exporter (${processor === 'batch' ? 'BatchSpanProcessor' : 'SimpleSpanProcessor'})`, sdk.tracer, sdk.drain, mode)
    }
  }
}

// The no-op rows measure the API's default tracer: nothing may have registered a provider.
if (trace.getTracerProvider().getTracer('check').startSpan('check').isRecording()) throw new Error('a global tracer provider is registered; the no-op rows are void')

console.table(
  rows.map((measured) => ({
    scenario: measured.scenario,
    plain: fmt(measured.plain),
    traced: fmt(measured.traced),
    ratio: `${measured.ratio.toFixed(3)}×`,
    target: measured.target === undefined ? 'reported' : `≤ ${measured.target}×`,
    result: measured.target === undefined ? '' : measured.ratio <= measured.target ? 'pass' : 'MISS',
  })),
)
