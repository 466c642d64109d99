import { expect, test } from 'vitest'
import type { StepResult } from '../../src/index.js'
import { STEP_SPAN, withTracing } from '../../src/otel.js'
import { agentWorld, createStepSurface, FIGURES, inMemoryTracing, spansNamed } from './tracing.fixtures.js'

// The cache-break attributes on a real registry's steps: the step surface computes cacheBreak.

test('a variable change: the section, its layer and the variable on the step that lost reuse, and nothing on the others', async () => {
  const { exporter, tracer } = inMemoryTracing()
  const world = await agentWorld()
  const traced = withTracing(createStepSurface(FIGURES), { tracer })
  const broke: StepResult['cacheBreak'][] = []
  for (const branch of ['main', 'main', 'release', 'release']) {
    world.branch.value = branch
    broke.push(traced.step({ assembly: await world.assemble() }).cacheBreak)
  }
  traced.end()
  expect(broke).toEqual([undefined, undefined, { cause: 'section', section: 'repo', layer: 'global', variable: 'branch' }, undefined])
  const attributes = spansNamed(exporter, STEP_SPAN).map((span) =>
    Object.fromEntries(Object.entries(span.attributes).filter(([key]) => key.startsWith('promptloom.cache_break.'))),
  )
  expect(attributes).toEqual([
    {},
    {},
    {
      'promptloom.cache_break.cause': 'section',
      'promptloom.cache_break.section': 'repo',
      'promptloom.cache_break.layer': 'global',
      'promptloom.cache_break.variable': 'branch',
    },
    {},
  ])
})

test('a scoped section added, then removed: the cause and the scope\'s label as the layer', async () => {
  const { exporter, tracer } = inMemoryTracing()
  const world = await agentWorld()
  const traced = withTracing(createStepSurface(FIGURES), { tracer })
  traced.step({ assembly: await world.assemble() })
  const dispose = world.scope.ctx.systemPrompt.section({ name: 'brief', order: 15, text: 'Fix the login test.' })
  traced.step({ assembly: await world.assemble() })
  await dispose()
  traced.step({ assembly: await world.assemble() })
  traced.end()
  const causes = spansNamed(exporter, STEP_SPAN).map((span) => [span.attributes['promptloom.cache_break.cause'], span.attributes['promptloom.cache_break.layer']])
  expect(causes).toEqual([[undefined, undefined], ['added', 'agent-1'], ['removed', 'agent-1']])
})
