import { commonPrefixLength, wholeCodePoints } from '../render/utf8.js'
import type { SessionLogCacheBreak, SessionLogWarning } from '../surface/session-log.js'
import type { ReplayedStep } from '../surface/session-log-replay.js'
import type { RequestHeaderEvent } from '../surface/surface-events.js'
import type { UsageRecord } from '../surface/usage-record.js'
import type { AgentLog } from './agent-log.js'
import { prefixSplits, prefixTree, type PrefixSplit, type SharedScopedSection, type TreeAgent, type TreeNode } from './prefix-tree.js'
import { configChanges, sectionChanges, toolChanges, type SectionChanges, type ToolChanges } from './step-changes.js'
import { stepParts, type StepPart } from './step-parts.js'

/**
 * What the report and `inspect` show, derived from the library's replay of
 * each log (its steps and their events): one row per step with the prefix
 * shares, a classified change list and, where reuse was lost, its cause and
 * the changed section's text before and after; across agents, the prefix
 * their latest system prompts share and a prefix tree of which agents share
 * which parts. Plain data; the HTML and terminal renderers only format it.
 */

/** The provider's usage report next to what the surface predicted: the usage record's figures. */
export type UsageFigures = Omit<UsageRecord, 'type' | 'step'> & {
  /** `cachedInputTokens / inputTokens` (0 when no input). */
  readonly observedShare: number
}

/** One step of one agent. */
export interface StepRow {
  readonly step: number
  /**
   * The step's anchor in the report: `<agent>-step-<N>` (whitespace in the
   * agent's name becomes `_`), and `<agent>-session-<S>-step-<N>` for the steps
   * of a later surface appending to the same log.
   */
  readonly anchor: string
  /** `ReplayedStep.session`: which surface wrote the step (a log appended to by several in turn has several). */
  readonly session: number
  readonly compacted: boolean
  /** UTF-16 code units of the system prompt the model holds after this step. */
  readonly promptLength: number
  readonly stablePrefixLength: number
  /** `stablePrefixLength / promptLength`, 0 for an empty prompt. */
  readonly stableShare: number
  readonly reusablePrefixLength: number
  /** `reusablePrefixLength / promptLength`, 0 for an empty prompt. */
  readonly reusableShare: number
  readonly promptTokens?: number
  readonly stablePrefixTokens?: number
  /** `true` on the first step of each session (nothing to compare with). */
  readonly first: boolean
  readonly sections: SectionChanges
  /** Present when this step sent a request header after the first step and its tools differ. */
  readonly tools?: ToolChanges
  /** Config keys whose value changed, when the config changed. */
  readonly config?: readonly string[]
  /** The request header's reason, when this step sent one. */
  readonly headerReason?: string
  readonly warnings: readonly SessionLogWarning[]
  /** Every section the budget withheld from this step's prompt (`[]` without a budget). */
  readonly withheld: readonly string[]
  readonly overBudget: boolean
  readonly usage?: UsageFigures
  /** Why the step lost reuse, as logged; absent when nothing was lost (or the log predates the field). */
  readonly cacheBreak?: SessionLogCacheBreak
  /**
   * The break's section text on the previous step and on this one (absent on
   * the side where it was not sent); absent for tool and config causes and
   * when the log cannot cut its prompts into parts.
   */
  readonly changedText?: { readonly before?: string; readonly after?: string }
  /** `expectedCachedTokens`: what the provider's rules let it serve from cache (when logged). */
  readonly expectedCachedTokens?: number
  /** Nothing happened: not a first step, no break, no change, header, warning or budget move. */
  readonly quiet: boolean
}

/** One agent's rows and headline figures. */
export interface AgentModel {
  readonly name: string
  readonly file: string
  readonly rows: readonly StepRow[]
  /** The system prompt after the last step. */
  readonly latestPrompt: string
  /** Mean `stableShare` over the steps that are not the first of their session (0 without any). */
  readonly meanStableShare: number
  /** Mean `reusableShare` over the same steps. */
  readonly meanReusableShare: number
  readonly warningCount: number
  /** Steps with a `cacheBreak`. */
  readonly breakCount: number
  /** The latest prompt as the prefix tree reads it. */
  readonly tree: TreeAgent
  /** What the reader skipped in this log (a torn line), as messages naming the file and line. */
  readonly readWarnings: readonly string[]
  /** Summed usage over the steps that have it, when any. */
  readonly usageTotals?: { readonly steps: number; readonly inputTokens: number; readonly cachedInputTokens: number; readonly predictedTokens?: number }
}

/** The prefix the agents' latest system prompts share. */
export interface SharedPrefix {
  /** UTF-16 code units common to every agent's latest prompt (never splitting a surrogate pair). */
  readonly length: number
  /** The shared text. */
  readonly text: string
  /** Per agent: the share of its latest prompt that is shared, and how its prompt continues after it. */
  readonly agents: readonly { readonly name: string; readonly share: number; readonly continuation: string }[]
}

/** What the agents share, part by part. */
export interface SharingModel {
  /** The prefix tree of the latest prompts. */
  readonly tree: readonly TreeNode[]
  /** Scoped sections that split an agent's prompt from its siblings', with their cost. */
  readonly splits: readonly PrefixSplit[]
  /** Scoped sections before global ones that every agent sends alike. */
  readonly sharedByAll: readonly SharedScopedSection[]
}

/** The whole report. */
export interface ReportModel {
  readonly agents: readonly AgentModel[]
  /** Present with two or more agents. */
  readonly shared?: SharedPrefix
  /** Present with two or more agents. */
  readonly sharing?: SharingModel
}

/** Builds the report model; agents keep the order of `logs`. */
export function buildReport(logs: readonly AgentLog[]): ReportModel {
  const agents = logs.map(agentModel)
  if (agents.length < 2) return { agents }
  const trees = agents.map((agent) => agent.tree)
  return { agents, shared: sharedPrefix(agents), sharing: { tree: prefixTree(trees), ...prefixSplits(trees) } }
}

/** Builds one agent's rows and headline figures. */
export function agentModel(log: AgentLog): AgentModel {
  const steps = log.steps
  const rows = steps.map((step, i) => stepRow(log.name, step, i === 0 || steps[i - 1]!.session !== step.session ? undefined : steps[i - 1]))
  const later = rows.filter((row) => !row.first)
  const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length)
  const used = rows.filter((row) => row.usage !== undefined).map((row) => row.usage!)
  const predicted = used.filter((usage) => usage.predictedTokens !== undefined)
  return {
    name: log.name,
    file: log.file,
    rows,
    latestPrompt: steps[steps.length - 1]!.prompt,
    meanStableShare: mean(later.map((row) => row.stableShare)),
    meanReusableShare: mean(later.map((row) => row.reusableShare)),
    warningCount: rows.reduce((sum, row) => sum + row.warnings.length, 0),
    breakCount: rows.reduce((sum, row) => sum + (row.cacheBreak === undefined ? 0 : 1), 0),
    tree: treeAgent(log.name, steps[steps.length - 1]!),
    readWarnings: log.warnings.map((warning) => warning.message),
    ...(used.length === 0
      ? {}
      : {
          usageTotals: {
            steps: used.length,
            inputTokens: used.reduce((sum, usage) => sum + usage.inputTokens, 0),
            cachedInputTokens: used.reduce((sum, usage) => sum + usage.cachedInputTokens, 0),
            ...(predicted.length === 0 ? {} : { predictedTokens: predicted.reduce((sum, usage) => sum + usage.predictedTokens!, 0) }),
          },
        }),
  }
}

/** The latest step as the prefix tree reads it: its parts, or the whole prompt as one part. */
function treeAgent(name: string, step: ReplayedStep): TreeAgent {
  const parts: StepPart[] = stepParts(step) ?? (step.prompt === '' ? [] : [{ name: '(prompt)', text: step.prompt, layer: undefined, tokens: undefined }])
  const tokensPerChar = step.promptTokens === undefined || step.prompt.length === 0 ? undefined : step.promptTokens / step.prompt.length
  return { name, parts, tokensPerChar }
}

/** `agent-1-step-4`; a later session's steps: `agent-1-session-2-step-4`. */
export function stepAnchor(agent: string, session: number, step: number): string {
  const name = agent.replace(/\s/g, '_')
  return session > 1 ? `${name}-session-${session}-step-${step}` : `${name}-step-${step}`
}

/** The texts of the break's section before and after the step, when the break names one and the log can cut both prompts. */
function changedTextOf(step: ReplayedStep, previous: ReplayedStep | undefined): StepRow['changedText'] {
  const cause = step.cacheBreak
  if (cause?.section === undefined || previous === undefined) return undefined
  const beforeParts = stepParts(previous)
  const afterParts = stepParts(step)
  if (beforeParts === undefined || afterParts === undefined) return undefined
  const before = beforeParts.find((part) => part.name === cause.section)?.text
  const after = afterParts.find((part) => part.name === cause.section)?.text
  return { ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }
}

/** One row; `previous` is the step before it in the same session (none for a session's first step). */
function stepRow(agent: string, step: ReplayedStep, previous: ReplayedStep | undefined): StepRow {
  const promptLength = step.prompt.length
  const share = (length: number): number => (promptLength === 0 ? 0 : Math.min(1, length / promptLength))
  const header = step.events.find((event): event is RequestHeaderEvent => event.type === 'request/header')
  const tools = previous !== undefined && header !== undefined ? toolChanges(previous.tools, header.tools) : undefined
  const config = previous !== undefined && header !== undefined ? configChanges(previous.config, header.config) : undefined
  const sections = sectionChanges(step, previous)
  const { changed, added, removed, withheld, restored } = sections
  const quiet =
    previous !== undefined &&
    step.cacheBreak === undefined &&
    changed.length + added.length + removed.length + withheld.length + restored.length === 0 &&
    header === undefined &&
    step.warnings.length === 0
  const changedText = changedTextOf(step, previous)
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
    ...(step.promptTokens === undefined ? {} : { promptTokens: step.promptTokens }),
    ...(step.stablePrefixTokens === undefined ? {} : { stablePrefixTokens: step.stablePrefixTokens }),
    first: previous === undefined,
    sections,
    ...(tools === undefined ? {} : { tools }),
    ...(config === undefined || config.length === 0 ? {} : { config }),
    ...(header === undefined ? {} : { headerReason: header.reason }),
    warnings: step.warnings,
    withheld: step.withheld ?? [],
    overBudget: step.overBudget === true,
    ...(step.usage === undefined ? {} : { usage: usageFigures(step.usage) }),
    ...(step.cacheBreak === undefined ? {} : { cacheBreak: step.cacheBreak }),
    ...(changedText === undefined ? {} : { changedText }),
    ...(step.expectedCachedTokens === undefined ? {} : { expectedCachedTokens: step.expectedCachedTokens }),
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
