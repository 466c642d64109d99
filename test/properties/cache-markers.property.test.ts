import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toAISDK, toAnthropic, type CacheTtlOption, type RequestAssembly, type Stability, type ToolSchema } from '../../src/index.js'
import { buildRenderedPrompt, type PartInput } from '../../src/render/rendered-prompt.js'

// SPEC §4.3, for random registries (stabilities, breakpoints, volatile placement), random caller
// histories with 0-4 markers at random depths and random TTLs, and random options: every request
// has at most 4 markers, none of promptloom's at or after volatile text, the caller's markers
// unchanged, and TTLs non-increasing in prefix order (tools → system → messages). The checks
// below read only the request and the generated inputs (no promptloom code).

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

type Ttl = '5m' | '1h' | undefined
type PartSpec = { readonly stability: Stability; readonly cacheBreakpoint: boolean; readonly text: string }

const partSpec = fc.record({
  stability: fc.constantFrom<Stability>('static', 'session', 'volatile'),
  cacheBreakpoint: fc.boolean(),
  text: fc.string({ minLength: 1, maxLength: 6 }),
})

const ttlOption: fc.Arbitrary<CacheTtlOption | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom<CacheTtlOption>('5m', '1h'),
  fc.record({ static: fc.constantFrom<Ttl>(undefined, '5m', '1h'), session: fc.constantFrom<Ttl>(undefined, '5m', '1h'), history: fc.constantFrom<Ttl>(undefined, '5m', '1h') }, { requiredKeys: [] }),
)

/** A caller marker: its TTL and where it sits (a text block, inside a tool_result, inside a document). */
const callerMarker = fc.record({ ttl: fc.constantFrom<Ttl>(undefined, '5m', '1h'), depth: fc.constantFrom('block', 'tool_result', 'document') })

const marker = (ttl: Ttl) => (ttl === undefined ? { type: 'ephemeral' as const } : { type: 'ephemeral' as const, ttl })
const rank = (ttl: unknown) => (ttl === '1h' ? 1 : 0)

/** A caller history of `count` messages; the markers (TTLs sorted long to short, so the history is valid) spread over them. */
function anthropicHistory(count: number, markers: readonly { ttl: Ttl; depth: string }[], endsWith: 'user' | 'assistant' | 'system'): { role: 'user' | 'assistant' | 'system'; content: unknown }[] {
  const sorted = [...markers].sort((a, b) => rank(b.ttl) - rank(a.ttl))
  const messages: { role: 'user' | 'assistant' | 'system'; content: unknown[] | string }[] = []
  for (let i = 0; i < count; i++) messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: i % 3 === 2 ? `plain ${i}` : [{ type: 'text', text: `m${i}` }] })
  sorted.forEach((m, k) => {
    const at = Math.min(messages.length - 1, Math.floor((k * messages.length) / Math.max(1, sorted.length)))
    const message = messages[at]!
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
    const block =
      m.depth === 'block'
        ? { type: 'text', text: `marked ${k}`, cache_control: marker(m.ttl) }
        : m.depth === 'tool_result'
          ? { type: 'tool_result', tool_use_id: `t${k}`, content: [{ type: 'text', text: `out ${k}`, cache_control: marker(m.ttl) }] }
          : { type: 'document', source: { type: 'content', content: [{ type: 'text', text: `doc ${k}`, cache_control: marker(m.ttl) }] } }
    message.content = [...blocks, block]
  })
  if (endsWith === 'system') messages.push({ role: 'system', content: 'Later instructions.' })
  else if (messages.length > 0 && messages.at(-1)!.role !== endsWith) messages.push({ role: endsWith, content: 'tail' })
  return messages
}

/** Every marker of `node` in prefix order: a node's nested markers before its own (post-order); tool inputs are data. */
function markersIn(node: unknown, markerOf: (node: Record<string, unknown>) => unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) {
    for (const item of node) markersIn(item, markerOf, out)
    return out
  }
  if (typeof node !== 'object' || node === null) return out
  const record = node as Record<string, unknown>
  for (const [key, value] of Object.entries(record)) if (key !== 'input' && key !== 'cache_control' && key !== 'providerOptions') markersIn(value, markerOf, out)
  const own = markerOf(record)
  if (own != null) out.push(own)
  return out
}

const anthropicMarker = (node: Record<string, unknown>) => node.cache_control
const aiSdkMarker = (node: Record<string, unknown>) => (node.providerOptions as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic?.cacheControl

function nonIncreasing(markers: readonly unknown[]): boolean {
  let sawShort = false
  for (const m of markers) {
    const long = (m as { ttl?: unknown }).ttl === '1h'
    if (long && sawShort) return false
    if (!long) sawShort = true
  }
  return true
}

/** UTF-16 offset where the first volatile part starts in the joined prompt (the text length when none is volatile). */
function volatileStart(parts: readonly PartSpec[]): number {
  let offset = 0
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) offset += 2
    if (parts[i]!.stability === 'volatile') return offset
    offset += parts[i]!.text.length
  }
  return Number.POSITIVE_INFINITY
}

function promptOf(parts: readonly PartSpec[]) {
  return buildRenderedPrompt(
    parts.map((part, i): PartInput => ({ name: `p${i}`, text: part.text, layer: 'global', origin: 'registry', stability: part.stability, variables: [], cacheBreakpoint: part.cacheBreakpoint, required: false, complete: false, priority: 0, substitutions: [] })),
  )
}

const assemblyWith = (toolCount: number): RequestAssembly => ({
  sections: [],
  contexts: [],
  variables: {},
  tools: Array.from({ length: toolCount }, (_, i): ToolSchema => ({ name: `tool${i}`, description: 'A tool.', parameters: { type: 'object', properties: {} } })),
})

const scenario = fc.record({
  parts: fc.array(partSpec, { maxLength: 7 }),
  tools: fc.integer({ min: 0, max: 3 }),
  messages: fc.integer({ min: 0, max: 6 }),
  markers: fc.array(callerMarker, { maxLength: 4 }),
  endsWith: fc.constantFrom<'user' | 'assistant' | 'system'>('user', 'assistant', 'system'),
  ttl: ttlOption,
  historyBreakpoint: fc.boolean(),
  snapshot: fc.constantFrom<string | false>('Runtime context.', false),
})

describe('cache markers (property)', () => {
  it('toAnthropic: at most 4 markers, none of promptloom’s at or after volatile text, caller markers unchanged, TTLs non-increasing', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const history = anthropicHistory(s.messages, s.messages === 0 ? [] : s.markers, s.endsWith)
        const before = structuredClone(history)
        const callerMarkers = markersIn(history, anthropicMarker)
        const request = toAnthropic({ assembly: assemblyWith(s.tools), rendered: promptOf(s.parts), messages: history as never, snapshot: s.snapshot, ttl: s.ttl, historyBreakpoint: s.historyBreakpoint })
        const all = [...markersIn(request.tools, anthropicMarker), ...markersIn(request.system, anthropicMarker), ...markersIn(request.messages, anthropicMarker)]
        expect(all.length).toBeLessThanOrEqual(4)
        // No system marker on a block that ends after the first volatile part starts.
        const limit = volatileStart(s.parts)
        let end = 0
        request.system.forEach((block, i) => {
          end += (i > 0 ? 2 : 0) + block.text.length
          if (block.cache_control !== undefined) expect(end).toBeLessThanOrEqual(limit)
        })
        // A tools marker only with a system marker in the stable run.
        if (request.tools.some((t) => t.cache_control !== undefined)) expect(request.system.some((b) => b.cache_control !== undefined)).toBe(true)
        // The caller's markers: the same objects, in the same order, unchanged; at most one marker added to the messages.
        const sent = markersIn(request.messages, anthropicMarker)
        expect(sent.filter((m) => callerMarkers.includes(m))).toEqual(callerMarkers)
        expect(sent.length - callerMarkers.length).toBeLessThanOrEqual(1)
        expect(history).toEqual(before)
        expect(nonIncreasing(all)).toBe(true)
        // A trailing system message stays last.
        if (s.endsWith === 'system') expect(request.messages.at(-1)!.role).toBe('system')
      }),
      { numRuns },
    )
  })

  it('toAISDK: the same four rules over system messages and the history (message and part provider options, at any depth)', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        // The AI SDK form: markers as providerOptions on parts (nested in tool outputs) or on whole messages.
        const sorted = [...(s.messages === 0 ? [] : s.markers)].sort((a, b) => rank(b.ttl) - rank(a.ttl))
        const history: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string | unknown[]; providerOptions?: unknown }[] = []
        for (let i = 0; i < s.messages; i++) history.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: i % 3 === 2 ? `plain ${i}` : [{ type: 'text', text: `m${i}` }] })
        sorted.forEach((m, k) => {
          const at = Math.min(history.length - 1, Math.floor((k * history.length) / Math.max(1, sorted.length)))
          const options = { anthropic: { cacheControl: marker(m.ttl) } }
          const message = history[at]!
          if (m.depth === 'block' && k === sorted.length - 1 && at === history.length - 1) message.providerOptions = options
          else {
            const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as unknown[])
            const part =
              m.depth === 'tool_result'
                ? { type: 'tool-result', toolCallId: `t${k}`, toolName: 'read', output: { type: 'content', value: [{ type: 'text', text: `out ${k}`, providerOptions: options }] } }
                : { type: 'text', text: `marked ${k}`, providerOptions: options }
            message.content = [...parts, part]
          }
        })
        if (s.endsWith === 'system') history.push({ role: 'system', content: 'Later instructions.' })
        const before = structuredClone(history)
        const callerMarkers = markersIn(history, aiSdkMarker)
        const request = toAISDK({ assembly: assemblyWith(s.tools), rendered: promptOf(s.parts), messages: history, snapshot: s.snapshot, ttl: s.ttl, historyBreakpoint: s.historyBreakpoint })
        const all = [...markersIn(request.system, aiSdkMarker), ...markersIn(request.messages, aiSdkMarker)]
        expect(all.length).toBeLessThanOrEqual(4)
        const limit = volatileStart(s.parts)
        let end = 0
        request.system.forEach((message, i) => {
          end += (i > 0 ? 2 : 0) + message.content.length
          if (message.providerOptions !== undefined) expect(end).toBeLessThanOrEqual(limit)
        })
        const sent = markersIn(request.messages, aiSdkMarker)
        expect(sent.filter((m) => callerMarkers.includes(m))).toEqual(callerMarkers)
        expect(sent.length - callerMarkers.length).toBeLessThanOrEqual(1)
        expect(history).toEqual(before)
        expect(nonIncreasing(all)).toBe(true)
        if (s.endsWith === 'system') expect(request.messages.at(-1)!.role).toBe('system')
      }),
      { numRuns },
    )
  })
})
