import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { readSessionLog } from '../src/node.js'
import { readmeBlocks } from './package/readme-blocks.js'

// Smoke tests: each example runs as a real script (node --import tsx), as a
// reader would run it, and its output is checked for the lines that carry
// its point.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function run(script: string, args: readonly string[] = [], timeout = 30_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join('examples', script), ...args],
      { cwd: ROOT, timeout, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
  })
}

function lines(output: string): string[] {
  return output.split('\n')
}

/** The text between a `===== title =====` header that contains `title` and the next header. */
function block(output: string, title: string): string {
  const all = lines(output)
  const start = all.findIndex((line) => line.startsWith('=====') && line.includes(title))
  if (start < 0) throw new Error(`no "${title}" block in:\n${output}`)
  const end = all.findIndex((line, i) => i > start && line.startsWith('====='))
  return all.slice(start + 1, end < 0 ? undefined : end).join('\n').trim()
}

const tmp = mkdtempSync(join(tmpdir(), 'promptloom-examples-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('examples/agent-harness.ts (npm start)', () => {
  test('the default run (3 agents, 20 steps) exits 0 with a line per agent per step', async () => {
    const log = join(tmp, 'default', 'session.jsonl')
    const { code, stdout, stderr } = await run('agent-harness.ts', ['--log', log], 60_000)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    for (let step = 1; step <= 20; step++) {
      for (const agent of ['agent-1', 'agent-2', 'agent-3']) {
        expect(stdout).toMatch(new RegExp(`^step +${step} +${agent} +re-rendered \\d+/\\d+ sections +prefix .+ ms`, 'm'))
      }
    }
    expect(block(stdout, 'agent-1: rendered system prompt')).toContain('You are Loom')
    expect(block(stdout, 'stats()')).toMatch(/^assemblies +60$/m)
  })

  test('a small run prints per-agent lines, the final prompt and stats, and writes a replayable log per agent', async () => {
    const log = join(tmp, 'small', 's.jsonl')
    const { code, stdout } = await run('agent-harness.ts', ['--steps', '3', '--agents', '2', '--log', log])
    expect(code).toBe(0)
    const stepLines = lines(stdout).filter((line) => /^step +\d+ +agent-\d/.test(line))
    expect(stepLines.map((line) => line.split(/ +/).slice(0, 3).join(' '))).toEqual([
      'step 1 agent-1',
      'step 1 agent-2',
      'step 2 agent-1',
      'step 2 agent-2',
      'step 3 agent-1',
      'step 3 agent-2',
    ])
    expect(stepLines[0]).toContain('prefix    first')
    expect(stepLines[2]).toMatch(/re-rendered 0\/\d+ sections +prefix +100\.0%/)

    const files = [join(tmp, 'small', 's.agent-1.jsonl'), join(tmp, 'small', 's.agent-2.jsonl')]
    expect(files.map(existsSync)).toEqual([true, true])
    expect(stdout).toContain(files[0]!)
    const replay = readSessionLog(files[0]!).steps
    expect(replay.map((step) => step.step)).toEqual([1, 2, 3])
    expect(replay[0]!.events.map((event) => event.type)).toEqual(['system/message', 'request/header', 'context/snapshot'])
    // The log replays to exactly the prompt the demo printed for agent-1.
    expect(replay[2]!.prompt).toBe(block(stdout, 'agent-1: rendered system prompt'))
    expect(replay[2]!.contextSnapshot).toBe(block(stdout, 'agent-1: runtime-context snapshot'))
    expect(readSessionLog(files[1]!).steps).toHaveLength(3)
  })

  test('the run writes the HTML report of all agents next to the logs and prints its path', async () => {
    const log = join(tmp, 'report', 's.jsonl')
    const { code, stdout } = await run('agent-harness.ts', ['--steps', '2', '--agents', '2', '--log', log])
    expect(code).toBe(0)
    const report = join(tmp, 'report', 'report.html')
    expect(stdout).toContain(`report written: ${report}`)
    const page = readFileSync(report, 'utf8')
    expect(page).toContain('data-agent="agent-1"')
    expect(page).toContain('data-agent="agent-2"')
  })

  test('the scripted plugin loads, unloads and variable change show up in the agents that see them, each with where reuse was lost', async () => {
    const { code, stdout } = await run('agent-harness.ts', ['--log', join(tmp, 'script', 's.jsonl')])
    expect(code).toBe(0)
    const line = (step: number, agent: string): string =>
      lines(stdout).find((l) => new RegExp(`^step +${step} +${agent} `).test(l)) ?? ''
    expect(line(4, 'agent-1')).toContain('added web:surface; tools changed (added browse)')
    expect(line(4, 'agent-1')).toMatch(/lost reuse at tools \+browse$/)
    expect(line(8, 'agent-2')).toMatch(/ removed plan:policy; lost reuse at removed "plan:policy" \(layer global\)$/)
    expect(line(11, 'agent-3')).toMatch(/re-rendered 1\/\d+ sections .*changed deployment:persona-suffix; lost reuse at section "deployment:persona-suffix" \(layer global\) variable "branch"$/)
    // Planning loads into agent-3's scope only at step 14.
    expect(line(14, 'agent-1')).toMatch(/re-rendered 0\/\d+ sections +prefix +100\.0%/)
    expect(line(14, 'agent-3')).toMatch(/ added plan:policy; lost reuse at added "plan:policy" \(layer agent-3\)$/)
    expect(stdout).toMatch(/agent-2: scoped entries deployment:persona-prefix \(shadows global\)/)
  })

  test('each step goes to the cache simulator and its usage is logged: steps that keep the prefix read it from cache', async () => {
    const log = join(tmp, 'usage', 's.jsonl')
    const { code, stdout } = await run('agent-harness.ts', ['--log', log])
    expect(code).toBe(0)
    expect(stdout).toContain('provider: claude-sonnet-4-6 on the local cache simulator')
    const first = readSessionLog(join(tmp, 'usage', 's.agent-1.jsonl')).steps
    const steps = readSessionLog(join(tmp, 'usage', 's.agent-2.jsonl')).steps
    expect([...first, ...steps].every((step) => step.usage !== undefined)).toBe(true)
    expect(first[0]!.usage!.cachedInputTokens).toBe(0)
    // agent-2's first request reads the tools agent-1's request wrote: one cache serves every agent.
    expect(steps[0]!.usage!.cachedInputTokens).toBeGreaterThan(0)
    // An unchanged step reads the whole system prompt and more (the history) from the cache.
    expect(steps[2]!.usage!.cachedInputTokens).toBeGreaterThan(steps[2]!.promptTokens!)
    expect(steps[2]!.usage!.expectedTokens).toBe(steps[2]!.expectedCachedTokens)
    expect(steps[2]!.expectedCachedTokens).toBeGreaterThan(0)
  })

  test("agent-1's budget withholds its own brief, not a shared section, when web-surface loads; sticky, and restored when it unloads", async () => {
    const log = join(tmp, 'budget', 's.jsonl')
    const { code, stdout } = await run('agent-harness.ts', ['--log', log])
    expect(code).toBe(0)
    const line = (step: number, agent: string): string =>
      lines(stdout).find((l) => new RegExp(`^step +${step} +${agent} `).test(l)) ?? ''
    expect(line(3, 'agent-1')).toMatch(/tokens +105\/105 +withheld 0 /)
    expect(line(4, 'agent-1')).toMatch(/withheld 1 .*added web:surface; tools changed \(added browse\); budget: withheld agent:brief; lost reuse at tools \+browse$/)
    // The usual rule would have withheld the preset's tools:guidance, splitting agent-1 from agent-3 before web:surface.
    expect(stdout).toMatch(
      /^ +sharing +agent-1 withheld agent:brief \(budget shared: 'prefer-unshared'\) and shares \d+ chars with agent-3 \(diverging in deployment:persona-suffix\); the usual rule would withhold tools:guidance, agent:brief and share \d+ chars with agent-3 \(diverging in web:surface\)$/m,
    )
    // Planning unloads: the prompt with the brief back would fit maxTokens, not the headroom (sticky).
    expect(line(8, 'agent-1')).toMatch(/withheld 1 .* removed plan:policy/)
    expect(line(17, 'agent-1')).toMatch(/withheld 0 .*budget: restored agent:brief/)
    expect(line(4, 'agent-2')).toMatch(/withheld 0 /)

    const steps = readSessionLog(join(tmp, 'budget', 's.agent-1.jsonl')).steps
    expect(steps.map((step) => step.withheld)).toEqual([...Array(3).fill([]), ...Array(13).fill(['agent:brief']), ...Array(4).fill([])])
    expect(steps[4]!.prompt).not.toContain('You are a sub-agent')
    expect(steps[4]!.prompt).toContain('Read a file before you edit it')
    const page = readFileSync(join(tmp, 'budget', 'report.html'), 'utf8')
    expect(page).toContain('<span class="chip withheld" title="withheld by the token budget">⊘agent:brief</span>')
    expect(page).toContain('<span class="chip restored" title="restored by the token budget">↺agent:brief</span>')
  })

  test('--help explains the flags and exits 0', async () => {
    const { code, stdout } = await run('agent-harness.ts', ['--help'])
    expect(code).toBe(0)
    for (const flag of ['--agents N', '--steps N', '--log PATH', '--help']) expect(stdout).toContain(flag)
  })

  test('a bad flag exits 1 with a pointer to --help', async () => {
    const { code, stderr } = await run('agent-harness.ts', ['--agents', 'zero'])
    expect(code).toBe(1)
    expect(stderr).toContain('--agents must be an integer from 1 to 1000 (got "zero") (see --help)')
  })
})

describe('focused examples', () => {
  test('usage: the README example runs and prints both steps, the second fully reusing the first prompt', async () => {
    const { code, stdout } = await run('usage.ts')
    expect(code).toBe(0)
    expect(lines(stdout).filter((line) => line.startsWith('---'))).toEqual([
      '--- step 1: tools read, stable prefix 0 chars',
      '--- step 2: tools read, stable prefix 100 chars',
    ])
    expect(stdout).toContain('You work for the platform team.\n\nPlan before you edit.\n\nWork in /work/agent-1.')
    expect(stdout).toContain('This is model step 2.')
    expect(stdout).toMatch(/toolClones: 1\b/)
    expect(stdout).toContain('replayed 2 steps from the session log')
  })

  test('usage: a README ts block is examples/usage.ts with the package import', () => {
    const blocks = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((block) => block.code)
    const file = readFileSync(join(ROOT, 'examples', 'usage.ts'), 'utf8')
      .replace("from '../src/index.js'", "from 'promptloom'")
      .replace("from '../src/node.js'", "from 'promptloom/node'")
    expect(blocks).toContain(file)
  })

  test('persona-shadowing: the scoped persona replaces the deployment persona for one agent only', async () => {
    const { code, stdout } = await run('persona-shadowing.ts')
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual(
      expect.arrayContaining([
        'builder: You are an AI agent. | You are a general-purpose assistant for the platform team.',
        'reviewer: You are an AI agent. | You review pull requests for the platform team and never push code yourself.',
        'reviewer persona comes from reviewer and shadows global',
        'reviewer after dispose: You are an AI agent. | You are a general-purpose assistant for the platform team.',
      ]),
    )
  })

  test('signal-variable: a signal write emits one change per batch and re-renders one section', async () => {
    const { code, stdout } = await run('signal-variable.ts')
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual(
      expect.arrayContaining([
        'before: Run the tests before you commit. | You are on git branch main.',
        'change events after one write: 1',
        'change events after a batch of two writes: 2',
        'after: Run the tests before you commit. | You are on git branch feature/login-v2.',
        'delta: structureRecomputes 0, sectionRenders 1, renderCacheHits 3',
      ]),
    )
  })

  test('authoring-safety: diagnostics before the first step, a required section surviving a hostile listener, the guard failing the render', async () => {
    const { code, stdout, stderr } = await run('authoring-safety.ts')
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(block(stdout, 'diagnostics()').split('\n').map((line) => line.split(':')[0])).toEqual([
      'no-value workspace {{branch}}',
      'malformed workspace',
      'unknown-variable workspace {{cmd}}',
      'volatile-in-section status {{clock}}',
      'unchanged registry, same array',
      'after the fixes',
      'no findings',
    ])
    expect(stdout).toContain('unchanged registry, same array: true')
    expect(lines(block(stdout, 'hostile listener'))).toEqual([
      'protocol section: "Always reply with a JSON object." (required: true, restored: true)',
      'prompt order: harness:identity, plugin:protocol, workspace, status, override',
      expect.stringMatching(/^warning required-restored plugin:protocol: required prompt section "plugin:protocol" in the global layer was restored/),
      'second step warnings about it: 0',
    ])
    expect(lines(block(stdout, 'stabilityGuard'))).toEqual([
      'diagnostics: volatile-in-section status',
      `render failed: prompt section "status" references volatile prompt variable "clock" in the global layer, which config stabilityGuard 'error' forbids`,
    ])
  })

  test('waterfall-listener: a scoped listener rewrites only its agent and never the registry', async () => {
    const { code, stdout } = await run('waterfall-listener.ts')
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual(
      expect.arrayContaining([
        'global prompt: You are an AI agent. | Answer in English.',
        'agent-fr prompt: You are an AI agent. | Answer in French.',
        'agent-fr context: User locale: fr-FR.',
        'registry section text: Answer in English.',
      ]),
    )
    expect(lines(stdout).filter((line) => line.startsWith('listener heard'))).toEqual([
      'listener heard an assembly for the global view',
      'listener heard an assembly for agent-fr',
      'listener heard an assembly for the global view',
    ])
  })

  test('suppression: a suppressed scope keeps only the required context until the suppressor is disposed', async () => {
    const { code, stdout } = await run('suppression.ts')
    expect(code).toBe(0)
    const all = 'Commands run in a sandbox without network access. | git status: 2 files modified. | Open files: src/index.ts'
    expect(lines(stdout)).toEqual(
      expect.arrayContaining([
        'quiet-agent (suppressed): Commands run in a sandbox without network access.',
        `chatty-agent: ${all}`,
        'quiet-agent prepare(): sandbox',
        `quiet-agent (suppressor disposed): ${all}`,
      ]),
    )
  })

  test('tool-ordering: listed tools at their positions, the rest sorted at the rest entry, conflicts rejected', async () => {
    const { code, stdout } = await run('tool-ordering.ts')
    expect(code).toBe(0)
    expect(lines(stdout)).toEqual(
      expect.arrayContaining([
        'coder-agent: read, apply_patch, edit, grep, web_fetch, bash',
        'read-only-agent: read, grep',
      ]),
    )
    expect(stdout).toMatch(/^duplicate: tool "read" is provided more than once/m)
    expect(stdout).toMatch(/^unregistered: toolOrder lists unregistered tool "deploy"/m)
  })
})

/** The lines between `// #region name` and `// #endregion name` of an example, unindented by two spaces. */
function region(file: string, name: string): string {
  const text = readFileSync(join(ROOT, 'examples', file), 'utf8')
  const start = text.indexOf(`// #region ${name}\n`) + `// #region ${name}\n`.length
  const end = text.indexOf(`  // #endregion ${name}`)
  return text.slice(start, end).replace(/^  /gm, '')
}

/** The ts code block of README.md that follows the line mentioning `examples/file`. */
function readmeBlock(file: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const calling = readme.slice(readme.indexOf('## Calling a model'))
  const after = calling.slice(calling.indexOf(`(examples/${file})`))
  return /```ts\n([\s\S]*?)```/.exec(after)![1]!
}

interface LoopStep {
  readonly step: number
  readonly reply: string
  readonly system: number
  readonly expected: number
  readonly observed: number
  readonly tools: number
  readonly systemShare: number
  readonly history: number
  /** `undefined` when the provider reports no cache writes (OpenAI). */
  readonly written: number | undefined
  readonly input: number
  readonly note: string
}

/** The rows of a loop example's closing cache table. */
function loopSteps(stdout: string): LoopStep[] {
  return block(stdout, 'cache per step')
    .split('\n')
    .slice(1)
    .map((line) => /^ *(\d+)  (→ \w+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+|—) +(\d+)(?:  (.*))?$/.exec(line))
    .filter((match) => match !== null)
    .map((m) => ({
      step: Number(m[1]),
      reply: m[2]!,
      system: Number(m[3]),
      expected: Number(m[4]),
      observed: Number(m[5]),
      tools: Number(m[6]),
      systemShare: Number(m[7]),
      history: Number(m[8]),
      written: m[9] === '—' ? undefined : Number(m[9]),
      input: Number(m[10]),
      note: m[11] ?? '',
    }))
}

describe.each([
  ['anthropic-loop.ts', 'anthropic-request', 'recorded Anthropic body'],
  ['openai-loop.ts', 'openai-request', 'recorded OpenAI body'],
])('examples/%s', (file, regionName, bodyTitle) => {
  const output = run(file)

  test('seven steps of tool calls; the plugin that loads at step 4 adds a tool the model then calls', async () => {
    const { code, stdout, stderr } = await output
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const steps = loopSteps(stdout)
    expect(steps.map((step) => step.reply)).toEqual(['→ read', '→ read', '→ read', '→ grep', '→ edit', '→ bash', '→ text'])
    expect(steps.map((step) => step.note)).toEqual(['first step', '', '', 'tools changed: nothing reusable', '', '', ''])
    expect(block(stdout, bodyTitle)).toContain('Current runtime context. This snapshot supersedes earlier')
  })

  test('the unannotated prompt is above the minimum cacheable length and cached at the simulator from step 2, except where the tools changed', async () => {
    const steps = loopSteps((await output).stdout)
    expect(steps[0]!.system).toBeGreaterThan(1024)
    expect(steps.map((step) => step.observed > 0)).toEqual([false, true, true, false, true, true, true])
    expect(steps.map((step) => step.expected > 0)).toEqual([false, true, true, false, true, true, true])
  })

  test('observed is the tools, the system prompt and the history; the system share is at least the expected tokens', async () => {
    const steps = loopSteps((await output).stdout)
    for (const step of steps) {
      expect(step.observed).toBe(step.tools + step.systemShare + step.history)
      expect(step.expected).toBeLessThanOrEqual(step.systemShare)
      expect(step.observed).toBeLessThan(step.input)
    }
    // The history breakpoint (Anthropic) or the automatic prefix cache (OpenAI) serves a growing history.
    expect(steps.slice(4).map((step) => step.history)).toEqual([...steps.slice(4).map((step) => step.history)].sort((a, b) => a - b))
    expect(steps[6]!.history).toBeGreaterThan(steps[4]!.history)
  })

  test('one printed line explains the difference between expected and observed', async () => {
    const { stdout } = await output
    expect(stdout).toMatch(/^why observed differs from expected: expected covers the system prompt only .*the simulator also serves the tools \(\d+–\d+ tokens/m)
  })

  test("the README snippet is the example's request code", () => {
    expect(readmeBlock(file)).toBe(region(file, regionName))
  })
})

test('examples/coding-agent.ts, the loops\' registry, sets no cache hint', () => {
  const source = readFileSync(join(ROOT, 'examples', 'coding-agent.ts'), 'utf8')
  expect(source).not.toMatch(/\b(stability|cacheBreakpoint)\s*:/)
})

describe('examples/anthropic-loop.ts expected and observed', () => {
  const log = join(tmp, 'anthropic-loop.jsonl')
  const output = run('anthropic-loop.ts', [log])

  test('with the same tokenizer as the simulator, the system share of observed equals expected on every reused step', async () => {
    const { stdout } = await output
    const steps = loopSteps(stdout)
    for (const step of steps.filter((step) => step.expected > 0)) expect([step.step, step.systemShare]).toEqual([step.step, step.expected])
    for (const step of steps.filter((step) => step.expected > 0)) expect(step.expected).toBe(step.system)
    expect(stdout).toContain('its system share equals expected on every reused step')
    // Every step writes its new turn at the history breakpoint.
    for (const step of steps) expect(step.written).toBeGreaterThan(0)
  })

  test('the last body: one marked system block (no hints: cached through its end), the last tool and the last tool result marked', async () => {
    const body = block((await output).stdout, 'recorded Anthropic body')
    const section = (name: string): string[] => {
      const rest = body.slice(body.indexOf(`${name}: [`))
      return rest.slice(0, rest.indexOf('\n]')).split('\n').slice(1)
    }
    expect(section('system')).toHaveLength(1)
    expect(section('system')[0]).toMatch(/"cache_control":\{"type":"ephemeral"\}\}$/)
    expect(section('tools').map((line) => line.includes('cache_control'))).toEqual([false, false, false, false, true])
    const messages = section('messages')
    expect(messages.map((line) => line.includes('cache_control'))).toEqual([...Array(messages.length - 1).fill(false), true])
    expect(messages.at(-1)).toMatch(/^ {2}\{"role":"user","content":\[\{"type":"tool_result","tool_use_id":"toolu_6".*"cache_control":\{"type":"ephemeral"\}\}\]\}$/)
  })

  test('the log replays usage onto each step with the expected tokens beside the cached ones', async () => {
    expect((await output).code).toBe(0)
    const replay = readSessionLog(log).steps
    expect(replay.map((step) => step.usage?.step)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(replay[3]).toMatchObject({ toolsChanged: true, reusablePrefixTokens: 0, expectedCachedTokens: 0, usage: { expectedTokens: 0, cachedInputTokens: 0 } })
    expect(replay[4]!.usage!.expectedTokens).toBe(replay[4]!.promptTokens)
    expect(replay[4]!.usage!.cachedInputTokens).toBeGreaterThan(replay[4]!.promptTokens!)
  })
})

describe('examples/openai-loop.ts request', () => {
  test('the body carries the derived prompt_cache_key, and the rounding to 128-token steps explains the system share', async () => {
    const { stdout } = await run('openai-loop.ts')
    expect(block(stdout, 'recorded OpenAI body')).toMatch(/^prompt_cache_key: "pl-[0-9a-f]{16}"$/m)
    for (const step of loopSteps(stdout).filter((step) => step.expected > 0)) expect(step.expected).toBe(Math.floor(step.system / 128) * 128)
    expect(stdout).toMatch(/its system share is expected plus \d+(–\d+)? that expected rounds down to the provider's granularity plus 3 of message framing/)
  })
})
