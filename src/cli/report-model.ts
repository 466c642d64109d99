import { commonPrefixLength, wholeCodePoints } from '../render/utf8.js'
import type { SessionLogCacheBreak, SessionLogWarning } from '../surface/session-log.js'
import type { ReplayedStep } from '../surface/session-log-replay.js'
import type { RequestHeaderEvent } from '../surface/surface-events.js'
import type { UsageRecord } from '../surface/usage-record.js'
import type { AgentLog } from './agent-log.js'
import { prefixSplits, prefixTree, type PrefixSplit, type SharedScopedSection, type TreeAgent, type TreeNode } from './prefix-tree.js'
import { configChanges, sectionChanges, stepParts, toolChanges, type SectionChanges, type StepPart, type ToolChanges } from './replayed-step.js'

/**
 * What the report and `inspect` show, derived from the library's replay of each
 * log: one row per step and, across agents, the prefix their latest prompts share
 * and the prefix tree. Plain data; the HTML and terminal renderers only format it.
 */

/** The usage record's figures with `observedShare`: `cachedInputTokens / inputTokens` (0 when no input). */
export type UsageFigures = Omit<UsageRecord, 'type' | 'step'> & { readonly observedShare: number }

/** One step of one agent. Shares are of the prompt the model holds after the step, in UTF-16 code units (0 when empty). */
export interface StepRow {
  readonly step: number
  /** `<agent>-step-<N>`, or `<agent>-session-<S>-step-<N>` after the first session (see `stepAnchor`). */
  readonly anchor: string
  /** `ReplayedStep.session`: which surface wrote the step. */
  readonly session: number
  readonly compacted: boolean
  readonly promptLength: number
  readonly stablePrefixLength: number
  readonly stableShare: number
  readonly reusablePrefixLength: number
  readonly reusableShare: number
  readonly promptTokens?: number
  readonly stablePrefixTokens?: number
  /** `true` on the first step of each session (nothing to compare with). */
  readonly first: boolean
  readonly sections: SectionChanges
  /** Present when a later step's request header changed the tools. */
  readonly tools?: ToolChanges
  /** Config keys whose value changed, when any did. */
  readonly config?: readonly string[]
  /** The request header's reason, when this step sent one. */
  readonly headerReason?: string
  readonly warnings: readonly SessionLogWarning[]
  /** Every section the budget withheld from this step's prompt (`[]` without a budget). */
  readonly withheld: readonly string[]
  readonly overBudget: boolean
  readonly usage?: UsageFigures
  /** Why the step lost reuse, as logged. */
  readonly cacheBreak?: SessionLogCacheBreak
  /** The break's section text before and after the step, when the log can cut both prompts into parts. */
  readonly changedText?: { readonly before?: string; readonly after?: string }
  readonly expectedCachedTokens?: number
  /** Nothing happened: not a first step, no break, no change, header, warning or budget move. */
  readonly quiet: boolean
}

/** One agent's rows and headline figures; means are over the steps that are not the first of their session (0 without any). */
export interface AgentModel {
  readonly name: string
  readonly file: string
  readonly rows: readonly StepRow[]
  readonly latestPrompt: string
  readonly meanStableShare: number
  readonly meanReusableShare: number
  readonly warningCount: number
  /** Steps with a `cacheBreak`. */
  readonly breakCount: number
  readonly tree: TreeAgent
  /** What the reader skipped in this log (a torn line), as messages naming the file and line. */
  readonly readWarnings: readonly string[]
  /** Summed usage over the steps that have it, when any. */
  readonly usageTotals?: { readonly steps: number; readonly inputTokens: number; readonly cachedInputTokens: number; readonly predictedTokens?: number }
}

/** The prefix the agents' latest prompts share, and per agent its share and how its prompt continues. */
export interface SharedPrefix {
  readonly length: number
  readonly text: string
  readonly agents: readonly { readonly name: string; readonly share: number; readonly continuation: string }[]
}

/** What the agents share, part by part: the prefix tree, the scoped sections that split it, those every agent sends alike. */
export interface SharingModel {
  readonly tree: readonly TreeNode[]
  readonly splits: readonly PrefixSplit[]
  readonly sharedByAll: readonly SharedScopedSection[]
}

/** The whole report; `shared` and `sharing` are present with two or more agents. */
export interface ReportModel {
  readonly agents: readonly AgentModel[]
  readonly shared?: SharedPrefix
  readonly sharing?: SharingModel
}

/** Builds the report model; agents keep the order of `logs`. */
export function buildReport(logs: readonly AgentLog[]): ReportModel {
  const agents = logs.map(agentModel)
  if (agents.length < 2) return { agents }
  const trees = agents.map((agent) => agent.tree)
  return { agents, shared: sharedPrefix(agents), sharing: { tree: prefixTree(trees), ...prefixSplits(trees) } }
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0)

/** Builds one agent's rows and headline figures. */
export function agentModel(log: AgentLog): AgentModel {
  const steps = log.steps
  const last = steps[steps.length - 1]!
  const rows = steps.map((step, i) => stepRow(log.name, step, i === 0 || steps[i - 1]!.session !== step.session ? undefined : steps[i - 1]))
  const later = rows.filter((row) => !row.first)
  const mean = (values: number[]): number => (values.length === 0 ? 0 : sum(values) / values.length)
  const used = rows.flatMap((row) => (row.usage === undefined ? [] : [row.usage]))
  const predicted = used.flatMap((usage) => (usage.predictedTokens === undefined ? [] : [usage.predictedTokens]))
  return {
    name: log.name,
    file: log.file,
    rows,
    latestPrompt: last.prompt,
    meanStableShare: mean(later.map((row) => row.stableShare)),
    meanReusableShare: mean(later.map((row) => row.reusableShare)),
    warningCount: sum(rows.map((row) => row.warnings.length)),
    breakCount: rows.filter((row) => row.cacheBreak !== undefined).length,
    tree: treeAgent(log.name, last),
    readWarnings: log.warnings.map((warning) => warning.message),
    usageTotals:
      used.length === 0
        ? undefined
        : {
            steps: used.length,
            inputTokens: sum(used.map((usage) => usage.inputTokens)),
            cachedInputTokens: sum(used.map((usage) => usage.cachedInputTokens)),
            predictedTokens: predicted.length === 0 ? undefined : sum(predicted),
          },
  }
}

/** The latest step as the prefix tree reads it: its parts, or the whole prompt as one part. */
function treeAgent(name: string, step: ReplayedStep): TreeAgent {
  const parts: StepPart[] = stepParts(step) ?? (step.prompt === '' ? [] : [{ name: '(prompt)', text: step.prompt, layer: undefined, tokens: undefined }])
  const tokensPerChar = step.promptTokens === undefined || step.prompt.length === 0 ? undefined : step.promptTokens / step.prompt.length
  return { name, parts, tokensPerChar }
}

/** `agent-1-step-4`; a later session's steps: `agent-1-session-2-step-4` (whitespace in the name becomes `_`). */
export function stepAnchor(agent: string, session: number, step: number): string {
  const name = agent.replace(/\s/g, '_')
  return session > 1 ? `${name}-session-${session}-step-${step}` : `${name}-step-${step}`
}

function changedTextOf(step: ReplayedStep, previous: ReplayedStep | undefined): StepRow['changedText'] {
  const section = step.cacheBreak?.section
  if (section === undefined || previous === undefined) return undefined
  const beforeParts = stepParts(previous)
  const afterParts = stepParts(step)
  if (beforeParts === undefined || afterParts === undefined) return undefined
  return { before: beforeParts.find((part) => part.name === section)?.text, after: afterParts.find((part) => part.name === section)?.text }
}

/** One row; `previous` is the step before it in the same session (none for a session's first step). */
function stepRow(agent: string, step: ReplayedStep, previous: ReplayedStep | undefined): StepRow {
  const promptLength = step.prompt.length
  const share = (length: number): number => (promptLength === 0 ? 0 : Math.min(1, length / promptLength))
  const header = step.events.find((event): event is RequestHeaderEvent => event.type === 'request/header')
  const config = previous !== undefined && header !== undefined ? configChanges(previous.config, header.config) : undefined
  const sections = sectionChanges(step, previous)
  const { changed, added, removed, withheld, restored } = sections
  const quiet =
    previous !== undefined &&
    step.cacheBreak === undefined &&
    changed.length + added.length + removed.length + withheld.length + restored.length === 0 &&
    header === undefined &&
    step.warnings.length === 0
  return {
    step: step.step,
    anchor: stepAnchor(agent, step.session, step.step),
    session: step.session,
    compacted: step.compacted,
    promptLength,
    stablePrefixLength: step.stablePrefixLength,
    stableShare: share(step.stablePrefixLength),
    reusablePrefixLength: step.reusablePrefixLength,
    reusableShare: share(step.reusablePrefixLength),
    promptTokens: step.promptTokens,
    stablePrefixTokens: step.stablePrefixTokens,
    first: previous === undefined,
    sections,
    tools: previous !== undefined && header !== undefined ? toolChanges(previous.tools, header.tools) : undefined,
    config: config?.length === 0 ? undefined : config,
    headerReason: header?.reason,
    warnings: step.warnings,
    withheld: step.withheld ?? [],
    overBudget: step.overBudget === true,
    usage: step.usage === undefined ? undefined : usageFigures(step.usage),
    cacheBreak: step.cacheBreak,
    changedText: changedTextOf(step, previous),
    expectedCachedTokens: step.expectedCachedTokens,
    quiet,
  }
}

function usageFigures(usage: UsageRecord): UsageFigures {
  const { type: _type, step: _step, ...figures } = usage
  return { ...figures, observedShare: usage.inputTokens === 0 ? 0 : usage.cachedInputTokens / usage.inputTokens }
}

/** The longest common prefix of the agents' latest prompts, in UTF-16 code units, cut back to whole code points. */
export function sharedPrefix(agents: readonly Pick<AgentModel, 'name' | 'latestPrompt'>[]): SharedPrefix {
  const first = agents[0]!.latestPrompt
  let length = first.length
  for (const agent of agents) length = Math.min(length, commonPrefixLength(first, agent.latestPrompt))
  for (const agent of agents) length = wholeCodePoints(first, agent.latestPrompt, length)
  return {
    length,
    text: first.slice(0, length),
    agents: agents.map((agent) => ({
      name: agent.name,
      share: agent.latestPrompt.length === 0 ? 0 : length / agent.latestPrompt.length,
      continuation: agent.latestPrompt.slice(length, length + 80),
    })),
  }
}

/** `0.931` → `'93.1%'`. */
export function percent(share: number): string {
  return `${(100 * share).toFixed(1)}%`
}

/** `1 step`, `2 steps`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}
