import type { AgentLog, LoggedStep, LoggedTool, LoggedWarning } from './log-reader.js'

/**
 * What the report and `inspect` show, derived from replayed logs: one row per
 * step with the prefix shares and a classified change list, and, across
 * agents, the prefix their latest system prompts share. Plain data; the HTML
 * and terminal renderers only format it.
 */

/** How a step's sections changed against the previous step. */
export interface SectionChanges {
  /** Sections whose output changed (present in both steps, or unknown when the log has no section lists). */
  readonly changed: readonly string[]
  /** Sections rendered now but not in the previous step. */
  readonly added: readonly string[]
  /** Sections rendered in the previous step but not now (withheld ones excluded). */
  readonly removed: readonly string[]
  /**
   * Sections the token budget withheld from this step's prompt that the
   * previous step sent (on the first step: every withheld one). A withheld
   * section is a reason the prompt changed, like a removal, but it is still
   * registered.
   */
  readonly withheld: readonly string[]
  /** Sections sent again this step after the budget had withheld them. */
  readonly restored: readonly string[]
  /** `false` when a step record lacks `sections`, so additions and removals count as changed. */
  readonly classified: boolean
}

/** How the tool declarations changed (from the two steps' `request/header` tool lists). */
export interface ToolChanges {
  readonly added: readonly string[]
  readonly removed: readonly string[]
  readonly changed: readonly string[]
  readonly reordered: boolean
}

/** The provider's usage report next to what the surface predicted. */
export interface UsageFigures {
  readonly inputTokens: number
  readonly cachedInputTokens: number
  readonly cacheWriteTokens?: number
  readonly predictedTokens?: number
  /** `cachedInputTokens / inputTokens` (0 when no input). */
  readonly observedShare: number
}

/** One step of one agent. */
export interface StepRow {
  readonly step: number
  readonly compacted: boolean
  /** UTF-16 code units of the system prompt the model holds after this step. */
  readonly promptLength: number
  readonly stablePrefixLength: number
  /** `stablePrefixLength / promptLength`, 0 for an empty prompt. */
  readonly stableShare: number
  readonly reusablePrefixLength?: number
  readonly reusableShare?: number
  readonly promptTokens?: number
  readonly stablePrefixTokens?: number
  /** `true` on the first step (nothing to compare with). */
  readonly first: boolean
  readonly sections: SectionChanges
  /** Present when this step sent a request header after the first step and its tools differ. */
  readonly tools?: ToolChanges
  /** Config keys whose value changed, when the config changed. */
  readonly config?: readonly string[]
  /** The request header's reason, when this step sent one. */
  readonly headerReason?: string
  readonly warnings: readonly LoggedWarning[]
  /** Every section the budget withheld from this step's prompt (`[]` without a budget). */
  readonly withheld: readonly string[]
  readonly overBudget: boolean
  readonly usage?: UsageFigures
}

/** One agent's rows and headline figures. */
export interface AgentModel {
  readonly name: string
  readonly file: string
  readonly rows: readonly StepRow[]
  /** The system prompt after the last step. */
  readonly latestPrompt: string
  /** Mean `stableShare` over the steps after the first (0 with one step). */
  readonly meanStableShare: number
  /** Mean `reusableShare` over the steps after the first, when every such step logged it. */
  readonly meanReusableShare?: number
  readonly warningCount: number
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

/** The whole report. */
export interface ReportModel {
  readonly agents: readonly AgentModel[]
  /** Present with two or more agents. */
  readonly shared?: SharedPrefix
}

/** Builds the report model; agents keep the order of `logs`. */
export function buildReport(logs: readonly AgentLog[]): ReportModel {
  const agents = logs.map(agentModel)
  return agents.length < 2 ? { agents } : { agents, shared: sharedPrefix(agents) }
}

/** Builds one agent's rows and headline figures. */
export function agentModel(log: AgentLog): AgentModel {
  const rows = log.steps.map((step, i) => stepRow(step, i === 0 ? undefined : log.steps[i - 1]))
  const later = rows.slice(1)
  const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length)
  const reusable = later.map((row) => row.reusableShare)
  const used = rows.filter((row) => row.usage !== undefined).map((row) => row.usage!)
  const predicted = used.filter((usage) => usage.predictedTokens !== undefined)
  return {
    name: log.name,
    file: log.file,
    rows,
    latestPrompt: log.steps[log.steps.length - 1]!.prompt,
    meanStableShare: mean(later.map((row) => row.stableShare)),
    ...(later.length > 0 && reusable.every((share) => share !== undefined) ? { meanReusableShare: mean(reusable as number[]) } : {}),
    warningCount: rows.reduce((sum, row) => sum + row.warnings.length, 0),
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

function stepRow(step: LoggedStep, previous: LoggedStep | undefined): StepRow {
  const promptLength = step.prompt.length
  const share = (length: number): number => (promptLength === 0 ? 0 : Math.min(1, length / promptLength))
  const header = step.header
  const tools = previous !== undefined && header !== undefined ? toolChanges(previous.tools, header.tools) : undefined
  const config = previous !== undefined && header !== undefined ? configChanges(previous.config, header.config) : undefined
  const row: StepRow = {
    step: step.step,
    compacted: step.compacted,
    promptLength,
    stablePrefixLength: step.stablePrefixLength,
    stableShare: share(step.stablePrefixLength),
    ...(step.reusablePrefixLength === undefined
      ? {}
      : { reusablePrefixLength: step.reusablePrefixLength, reusableShare: share(step.reusablePrefixLength) }),
    ...(step.promptTokens === undefined ? {} : { promptTokens: step.promptTokens }),
    ...(step.stablePrefixTokens === undefined ? {} : { stablePrefixTokens: step.stablePrefixTokens }),
    first: previous === undefined,
    sections: sectionChanges(step, previous),
    ...(tools === undefined ? {} : { tools }),
    ...(config === undefined || config.length === 0 ? {} : { config }),
    ...(header === undefined ? {} : { headerReason: header.reason }),
    warnings: step.warnings,
    withheld: step.withheld ?? [],
    overBudget: step.overBudget === true,
    ...(step.usage === undefined
      ? {}
      : {
          usage: {
            ...step.usage,
            observedShare: step.usage.inputTokens === 0 ? 0 : step.usage.cachedInputTokens / step.usage.inputTokens,
          },
        }),
  }
  return row
}

/**
 * Splits `changedSections` into changed, added and removed using the two
 * steps' `sections` lists; a section that appears or disappears counts even
 * when the writer did not list it as changed. Without both lists everything
 * stays "changed". Sections the budget newly withheld or restored (from the
 * steps' `withheld` lists) are reported as such, not as removed or added.
 */
export function sectionChanges(
  step: Pick<LoggedStep, 'changedSections' | 'sections' | 'withheld'>,
  previous: Pick<LoggedStep, 'sections' | 'withheld'> | undefined,
): SectionChanges {
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

/** Tool names added, removed, changed (same name, different JSON) and whether the common ones moved; `undefined` when identical. */
export function toolChanges(before: readonly LoggedTool[], after: readonly LoggedTool[]): ToolChanges | undefined {
  const old = new Map(before.map((tool) => [tool.name, tool.json]))
  const now = new Map(after.map((tool) => [tool.name, tool.json]))
  const added = after.filter((tool) => !old.has(tool.name)).map((tool) => tool.name)
  const removed = before.filter((tool) => !now.has(tool.name)).map((tool) => tool.name)
  const changed = after.filter((tool) => old.has(tool.name) && old.get(tool.name) !== tool.json).map((tool) => tool.name)
  const commonBefore = before.filter((tool) => now.has(tool.name)).map((tool) => tool.name)
  const commonAfter = after.filter((tool) => old.has(tool.name)).map((tool) => tool.name)
  const reordered = commonBefore.some((name, i) => commonAfter[i] !== name)
  if (added.length + removed.length + changed.length === 0 && !reordered) return undefined
  return { added, removed, changed, reordered }
}

/** The config keys whose JSON value differs (added, removed or changed), in first-seen order. */
export function configChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
}

/** The longest common prefix of the agents' latest prompts, in UTF-16 code units, cut back to whole code points. */
export function sharedPrefix(agents: readonly Pick<AgentModel, 'name' | 'latestPrompt'>[]): SharedPrefix {
  const prompts = agents.map((agent) => agent.latestPrompt)
  let length = Math.min(...prompts.map((text) => text.length))
  for (let i = 0; i < length; i++) {
    const c = prompts[0]!.charCodeAt(i)
    if (prompts.some((text) => text.charCodeAt(i) !== c)) {
      length = i
      break
    }
  }
  // A high surrogate at the end would split a code point that differs after it.
  if (length > 0 && isHighSurrogate(prompts[0]!.charCodeAt(length - 1)) && prompts.some((text) => text.length > length)) length--
  return {
    length,
    text: prompts[0]!.slice(0, length),
    agents: agents.map((agent) => ({
      name: agent.name,
      share: agent.latestPrompt.length === 0 ? 0 : length / agent.latestPrompt.length,
      continuation: agent.latestPrompt.slice(length, length + 80),
    })),
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** `0.931` → `'93.1%'`. */
export function percent(share: number): string {
  return `${(100 * share).toFixed(1)}%`
}
