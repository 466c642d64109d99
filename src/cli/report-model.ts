import type { ToolSchema } from '../assembly/types.js'
import { PART_SEPARATOR } from '../render/rendered-prompt.js'
import { commonPrefixLength, wholeCodePoints } from '../render/utf8.js'
import { headerStateOf, toolDiff, type ToolDiff } from '../surface/cache-break.js'
import type { ReplayedStep } from '../surface/session-log-replay.js'
import type { RequestHeaderEvent, UsageRecord } from '../surface/step-result.js'
import type { AgentLog } from './run.js'
import { prefixSplits, prefixTree, sum } from './prefix-tree.js'

/** One step of one agent. Shares are of the prompt the model holds after the step, in UTF-16 code units (0 when empty). */
export type StepRow = ReturnType<typeof stepRow>

/** One agent's rows and headline figures; means are over the steps after the first of each session (`undefined` without any). */
export type AgentModel = ReturnType<typeof agentModel>

/** The whole report; `shared` and `sharing` (the prefix tree and its scoped splits) are present with two or more agents. */
export type ReportModel = ReturnType<typeof buildReport>

/** Builds the report model; agents keep the order of `logs`. */
export function buildReport(logs: readonly AgentLog[]) {
  const agents = logs.map(agentModel)
  if (agents.length < 2) return { agents }
  const trees = agents.map((agent) => agent.tree)
  return { agents, shared: sharedPrefix(agents), sharing: { tree: prefixTree(trees), ...prefixSplits(trees) } }
}

/** `part / whole`, or 0 when `whole` is 0. */
export const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole)

export function agentModel(log: AgentLog) {
  const steps = log.steps
  const last = steps[steps.length - 1]!
  const rows = steps.map((step, i) => stepRow(log.name, step, i === 0 || steps[i - 1]!.session !== step.session ? undefined : steps[i - 1]))
  const later = rows.filter((row) => !row.first)
  const mean = (values: number[]): number | undefined => (values.length === 0 ? undefined : sum(values) / values.length)
  const used = rows.flatMap((row) => (row.usage === undefined ? [] : [row.usage]))
  const predicted = used.flatMap((usage) => (usage.predictedTokens === undefined ? [] : [usage.predictedTokens]))
  // The latest prompt for the prefix tree: its parts (or the whole prompt as one), tokens per char for unlogged counts.
  const parts: StepPart[] = stepParts(last) ?? (last.prompt === '' ? [] : [{ name: '(prompt)', text: last.prompt, layer: undefined, tokens: undefined }])
  const tokensPerChar = last.promptTokens === undefined || last.prompt.length === 0 ? undefined : last.promptTokens / last.prompt.length
  return {
    name: log.name,
    file: log.file,
    rows,
    latestPrompt: last.prompt,
    meanStableShare: mean(later.map((row) => row.stableShare)),
    meanReusableShare: mean(later.map((row) => row.reusableShare)),
    warningCount: sum(rows.map((row) => row.warnings.length)),
    breakCount: rows.filter((row) => row.cacheBreak !== undefined).length,
    tree: { name: log.name, parts, tokensPerChar },
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

/** `agent-1-step-4`; a later session's steps: `agent-1-session-2-step-4` (whitespace in the name becomes `_`). */
export function stepAnchor(agent: string, session: number, step: number): string {
  return `${agent.replace(/\s/g, '_')}${session > 1 ? `-session-${session}` : ''}-step-${step}`
}

/** One row; `previous` is the step before it in the same session (none for a session's first step). */
function stepRow(agent: string, step: ReplayedStep, previous: ReplayedStep | undefined) {
  const promptLength = step.prompt.length
  const share = (length: number): number => (promptLength === 0 ? 0 : Math.min(1, length / promptLength))
  const header = step.events.find((event): event is RequestHeaderEvent => event.type === 'request/header')
  const config = previous !== undefined && header !== undefined ? configChanges(previous.config, header.config) : undefined
  const sections = sectionChanges(step, previous)
  // The break's section text before and after the step, when the log can cut both prompts into parts.
  const section = step.cacheBreak?.section
  const before = section === undefined || previous === undefined ? undefined : stepParts(previous)
  const after = before && stepParts(step)
  const text = (parts: StepPart[]): string | undefined => parts.find((part) => part.name === section)?.text
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
    changedText: before && after && { before: text(before), after: text(after) },
    expectedTokens: step.usage?.expectedTokens ?? step.expectedCachedTokens,
    // Nothing happened: not a first step, no break, no change, header, warning or budget move (the page folds these rows).
    quiet:
      previous !== undefined && step.cacheBreak === undefined && header === undefined &&
      !changedAny(sections) && step.warnings.length === 0,
  }
}

/** The usage record's figures with `observedShare`: `cachedInputTokens / inputTokens`. */
function usageFigures({ type: _type, step: _step, ...figures }: UsageRecord) {
  return { ...figures, observedShare: ratio(figures.cachedInputTokens, figures.inputTokens) }
}

/** The agents' latest prompts' longest common prefix (UTF-16, cut to whole code points); per agent its share and continuation. */
export function sharedPrefix(agents: readonly { readonly name: string; readonly latestPrompt: string }[]) {
  const first = agents[0]!.latestPrompt
  let length = first.length
  for (const agent of agents) length = Math.min(length, commonPrefixLength(first, agent.latestPrompt))
  for (const agent of agents) length = wholeCodePoints(first, agent.latestPrompt, length)
  return {
    length,
    text: first.slice(0, length),
    agents: agents.map((agent) => ({
      name: agent.name,
      share: ratio(length, agent.latestPrompt.length),
      continuation: agent.latestPrompt.slice(length, wholeCodePoints(agent.latestPrompt, agent.latestPrompt, length + 80)),
    })),
  }
}

/** `0.931` → `'93.1%'`. */
export const percent = (share: number): string => `${(100 * share).toFixed(1)}%`

/** `1 step`, `2 steps`. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

/** One sent part of a step; `layer` is `'global'`, the supplying scope's label, or `undefined` when the log does not say. */
export type StepPart = Readonly<{ name: string; text: string; layer: string | undefined; tokens: number | undefined }>

/** `step.prompt` cut into its `sections` by `sectionLengths`; `undefined` when those are missing or do not add up to it. */
export function stepParts(step: Pick<ReplayedStep, 'prompt' | 'sections' | 'sectionLengths' | 'sectionLayers' | 'sectionTokens'>): StepPart[] | undefined {
  const { prompt, sections, sectionLengths: lengths } = step
  if (sections === undefined || lengths === undefined || lengths.length !== sections.length) return undefined
  const layers = step.sectionLayers?.length === sections.length ? step.sectionLayers : undefined
  const tokens = step.sectionTokens?.length === sections.length ? step.sectionTokens : undefined
  const parts: StepPart[] = []
  let at = 0
  for (let i = 0; i < sections.length; i++) {
    if (i > 0 && !prompt.startsWith(PART_SEPARATOR, at)) return undefined
    const start = i === 0 ? at : at + PART_SEPARATOR.length
    const end = start + lengths[i]!
    parts.push({ name: sections[i]!, text: prompt.slice(start, end), layer: layers?.[i] ?? undefined, tokens: tokens?.[i] })
    at = end
  }
  return at === prompt.length ? parts : undefined
}

/**
 * How a step's sections changed against the previous step: `changedSections` split into changed, added and removed
 * by both steps' `sections` (`classified` is `false` without both: everything stays "changed"). `withheld`: sent before,
 * withheld by the budget now (on the first step: every withheld one); `restored`: sent again; neither counts as removed or added.
 */
export function sectionChanges(
  step: Pick<ReplayedStep, 'changedSections' | 'sections' | 'withheld'>,
  previous: Pick<ReplayedStep, 'sections' | 'withheld'> | undefined,
) {
  const held = step.withheld ?? []
  if (previous === undefined) return { changed: [], added: step.sections ?? [], removed: [], withheld: held, restored: [], classified: step.sections !== undefined }
  const heldBefore = previous.withheld ?? []
  const withheld = held.filter((name) => !heldBefore.includes(name))
  // A name that left the withheld set but is not sent now left the registry: nothing changed in the prompt.
  const restored = heldBefore.filter((name) => !held.includes(name) && (step.sections === undefined || step.sections.includes(name)))
  const budgeted = (name: string): boolean => withheld.includes(name) || restored.includes(name)
  if (step.sections === undefined || previous.sections === undefined) {
    return { changed: step.changedSections.filter((name) => !budgeted(name)), added: [], removed: [], withheld, restored, classified: false }
  }
  const now = new Set(step.sections)
  const before = new Set(previous.sections)
  const added = step.sections.filter((name) => !before.has(name) && !budgeted(name))
  const removed = previous.sections.filter((name) => !now.has(name) && !budgeted(name))
  const changed = step.changedSections.filter((name) => now.has(name) && before.has(name))
  return { changed, added, removed, withheld, restored, classified: true }
}

/** Whether any section changed, entered, left, or was withheld or restored by the budget. */
export function changedAny({ changed, added, removed, withheld, restored }: ReturnType<typeof sectionChanges>): boolean {
  return changed.length + added.length + removed.length + withheld.length + restored.length > 0
}

/** The tool changes between two steps' declarations (the step surface's own comparison); `undefined` when identical. */
export function toolChanges(before: readonly ToolSchema[], after: readonly ToolSchema[]): ToolDiff | undefined {
  const diff = toolDiff(headerStateOf(before, '', undefined), headerStateOf(after, '', undefined))
  return diff.added.length + diff.removed.length + diff.changed.length === 0 && !diff.reordered ? undefined : diff
}

/** The config keys whose JSON value differs (added, removed or changed), in first-seen order. */
export function configChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
}
