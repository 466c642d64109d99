import { buildRenderedPrompt, type PartInput } from '../../src/render/rendered-prompt.js'
import type { RenderedPrompt, RequestAssembly, Stability, ToolSchema } from '../../src/index.js'

/** A part spec: name, text, stability (default 'static'), cacheBreakpoint (default false). */
export type PartSpec = readonly [name: string, text: string, stability?: Stability, cacheBreakpoint?: boolean]

/** A RenderedPrompt with the given parts (the builder decides the blocks and breakpoints). */
export function promptOf(parts: readonly PartSpec[]): RenderedPrompt {
  return buildRenderedPrompt(
    parts.map(
      ([name, text, stability = 'static', cacheBreakpoint = false]): PartInput => ({
        name,
        text,
        layer: 'global',
        origin: 'registry',
        stability,
        variables: [],
        cacheBreakpoint,
        required: false,
        complete: false,
        priority: 0,
        substitutions: [],
      }),
    ),
  )
}

export function tool(name: string, description = `The ${name} tool.`): ToolSchema {
  return { name, description, parameters: { type: 'object', properties: { path: { type: 'string' } } } }
}

/** A plain assembly: sections and contexts as [name, text] pairs. */
export function assemblyOf(
  sections: readonly (readonly [string, string])[],
  extra: { contexts?: readonly (readonly [string, string])[]; tools?: ToolSchema[] } = {},
): RequestAssembly {
  return {
    sections: sections.map(([name, text], order) => ({ name, order, text })),
    contexts: (extra.contexts ?? []).map(([name, text]) => ({ name, text })),
    variables: {},
    tools: extra.tools ?? [],
  }
}

/** identity + policy (static, breakpoint), then a session part, then a volatile one: blocks [static*][session*][volatile]. */
export const PROMPT = promptOf([
  ['identity', 'You are Loom, a coding agent.'],
  ['policy', 'Run the tests before you commit.', 'static', true],
  ['workspace', 'Work in /work/agent-1.', 'session'],
  ['clock', 'Step 7.', 'volatile'],
])

export const ASSEMBLY = assemblyOf(
  [
    ['identity', 'You are Loom, a coding agent.'],
    ['policy', 'Run the tests before you commit.'],
  ],
  { contexts: [['git', 'git status: 2 files modified.']], tools: [tool('read'), tool('grep')] },
)

export const SNAPSHOT = 'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\ngit status: 2 files modified.'
