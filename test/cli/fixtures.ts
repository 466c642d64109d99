/** Hand-written session-log lines for the CLI tests. */

import { agentNameOf, runCli, type AgentLog } from '../../src/cli/run.js'
import { parseSessionLog } from '../../src/index.js'

/** A step record with the base fields; `extra` adds or overrides fields. */
export function stepLine(step: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'step',
    step,
    compacted: false,
    stablePrefixLength: 0,
    stablePrefixBytes: 0,
    changedSections: [],
    warnings: [],
    ...extra,
  })
}

/** A `system/message` event. */
export function messageLine(text: string, op: 'append' | 'replace' = 'replace', node = 0): string {
  return JSON.stringify({ type: 'system/message', op, node, text })
}

/** A `request/header` event with tools named `tools` (each with a description, changeable via `descriptions`). */
export function headerLine(
  tools: readonly string[],
  reason: string,
  config: Record<string, unknown> = { model: 'm' },
  descriptions: Record<string, string> = {},
): string {
  return JSON.stringify({
    type: 'request/header',
    config,
    tools: tools.map((name) => ({ name, description: descriptions[name] ?? `${name} tool`, parameters: {} })),
    reason,
  })
}

/** A `usage` record. */
export function usageLine(step: number, inputTokens: number, cachedInputTokens: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'usage', step, inputTokens, cachedInputTokens, ...extra })
}

/** Lines joined into JSONL text. */
export function jsonl(...lines: string[]): string {
  return lines.join('\n') + '\n'
}

/**
 * A three-step log: step 2 keeps everything, step 3 removes "plan", adds "web",
 * changes "persona", adds tool "browse" and changes the config's temperature.
 */
export function threeStepLog(): string {
  const v1 = 'You are Loom.\n\nPersona A.\n\nPlan first.'
  const v3 = 'You are Loom.\n\nPersona B.\n\nWeb UI.'
  return jsonl(
    stepLine(1, { sections: ['identity', 'persona', 'plan'] }),
    messageLine(v1, 'append'),
    headerLine(['read'], 'initial', { model: 'm', temperature: 0 }),
    stepLine(2, { stablePrefixLength: v1.length, stablePrefixBytes: v1.length, sections: ['identity', 'persona', 'plan'] }),
    stepLine(3, {
      stablePrefixLength: 'You are Loom.\n\nPersona '.length,
      stablePrefixBytes: 'You are Loom.\n\nPersona '.length,
      changedSections: ['persona', 'plan', 'web'],
      firstChangedSection: 'persona',
      sections: ['identity', 'persona', 'web'],
      warnings: [{ kind: 'volatile-variable', section: 'persona', layer: 'global', variable: 'date', message: 'section "persona" references volatile variable "date"' }],
    }),
    messageLine(v3),
    headerLine(['read', 'browse'], 'tools changed (added browse); config changed', { model: 'm', temperature: 1 }),
  )
}

/**
 * A four-step log under a token budget: step 2 adds "tips" and the budget
 * withholds "examples" to make room, step 3 changes nothing, step 4 removes
 * "tips" and "examples" is restored.
 */
export function budgetLog(): string {
  const v1 = 'You are Loom.\n\nExamples.'
  const v2 = 'You are Loom.\n\nTips.'
  return jsonl(
    stepLine(1, { sections: ['identity', 'examples'], withheld: [], overBudget: false, promptTokens: 6, stablePrefixTokens: 0 }),
    messageLine(v1, 'append'),
    stepLine(2, {
      stablePrefixLength: 'You are Loom.\n\n'.length,
      changedSections: ['examples', 'tips'],
      firstChangedSection: 'examples',
      sections: ['identity', 'tips'],
      withheld: ['examples'],
      overBudget: false,
      promptTokens: 5,
      stablePrefixTokens: 4,
      warnings: [{ kind: 'withheld', sections: ['examples'], message: 'token budget withheld prompt section "examples"' }],
    }),
    messageLine(v2),
    stepLine(3, { stablePrefixLength: v2.length, sections: ['identity', 'tips'], withheld: ['examples'], overBudget: false, promptTokens: 5, stablePrefixTokens: 5 }),
    stepLine(4, {
      stablePrefixLength: 'You are Loom.\n\n'.length,
      changedSections: ['examples', 'tips'],
      firstChangedSection: 'examples',
      sections: ['identity', 'examples'],
      withheld: [],
      overBudget: false,
      promptTokens: 6,
      stablePrefixTokens: 4,
      warnings: [{ kind: 'restored', sections: ['examples'], message: 'token budget restored prompt section "examples"' }],
    }),
    messageLine(v1),
  )
}

/** `text` replayed by the library's parser as the CLI reads a log named `file` (one agent). */
export function agentLogOf(text: string, file: string): AgentLog {
  const { steps, warnings } = parseSessionLog(text, file)
  return { name: agentNameOf(file), file, steps, warnings }
}

/** Runs the CLI in-process on `argv`, capturing its exit code and both output streams. */
export function cli(...argv: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = ''
  let stderr = ''
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } })
  return { code, stdout, stderr }
}
