import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startCollector } from './otlp-collector.fixtures.js'

// The demo (npm start) with the standard OTEL_EXPORTER_OTLP_ENDPOINT pointing
// at a collector stand-in on 127.0.0.1: every agent's steps arrive as spans.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), 'promptloom-otel-demo-'))
let collector: Awaited<ReturnType<typeof startCollector>>

beforeAll(async () => {
  collector = await startCollector()
})
afterAll(async () => {
  await collector.close()
  rmSync(tmp, { recursive: true, force: true })
})

function demo(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { OTEL_EXPORTER_OTLP_ENDPOINT: _endpoint, OTEL_SERVICE_NAME: _service, ...inherited } = process.env
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join('examples', 'agent-harness.ts'), '--agents', '2', '--steps', '3', '--log', join(tmp, 'session.jsonl')],
      { cwd: ROOT, timeout: 60_000, env: { ...inherited, NO_COLOR: '1', ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    )
  })
}

test('with OTEL_EXPORTER_OTLP_ENDPOINT set, the demo exports one promptloom.step span per agent and step, flushed before it exits', async () => {
  const { code, stdout, stderr } = await demo({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin })
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  expect(stdout).toContain(`tracing: exporting promptloom.step spans to ${collector.origin} (OTLP/HTTP)`)
  expect(stdout.trim().split('\n').at(-1)).toBe('tracing: spans flushed')
  expect(new Set(collector.received.map((request) => request.path))).toEqual(new Set(['/v1/traces']))
  // Other instrumented libraries the demo uses may export spans of their own beside promptloom's.
  const spans = collector.spans().filter((span) => span.name === 'promptloom.step')
  expect(spans.map((span) => `${span.attributes['promptloom.agent']}#${span.attributes['promptloom.step']}`).sort()).toEqual(
    ['agent-1#1', 'agent-1#2', 'agent-1#3', 'agent-2#1', 'agent-2#2', 'agent-2#3'],
  )
  expect(new Set(spans.map((span) => span.resource['service.name']))).toEqual(new Set(['promptloom-demo']))
  // agent-1 runs under a token budget, so its spans carry the withheld list; every agent's carry token figures.
  const first = (agent: string) => spans.find((span) => span.attributes['promptloom.agent'] === agent && span.attributes['promptloom.step'] === 1)!
  expect(first('agent-1').attributes['promptloom.withheld']).toEqual([])
  expect(first('agent-2').attributes['promptloom.prompt_tokens']).toBeGreaterThan(0)
})

test('without it, the demo exports nothing and prints nothing about tracing', async () => {
  const before = collector.received.length
  const { code, stdout } = await demo({})
  expect(code).toBe(0)
  expect(stdout).not.toContain('tracing:')
  expect(collector.received.length).toBe(before)
})
