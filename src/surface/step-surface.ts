import { checkShape, describeValue, optionError, type Culprit } from '../assembly/errors.js'
import { deepFreeze } from '../assembly/tools.js'
import { assembledFor } from '../assembly/provenance.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { render, renderContextSections, renderContextSnapshot } from '../render/render.js'
import { TokenBudget, type BudgetOptions } from './budget.js'
import { cacheBreakOf, headerChange, headerStateOf, NO_PROMPT, prefixReportOf, type HeaderState } from './cache-break.js'
import { checkCacheRules, type CacheRules } from './cache-rules.js'
import { lintStability, ReportedWarnings } from './stability-lint.js'
import { StepCounts } from './step-tokens.js'
import { usageRecordOf, type ObservedUsage, type StepResult, type SurfaceEvent, type UsageRecord } from './step-result.js'

const STEP_ASSEMBLY: Culprit = { is: 'step option "assembly" is', has: 'step option "assembly" has',
  fix: 'pass the result of systemPrompt.assemble()', kind: TypeError }
const ITEMS = ['sections', 'contexts'] as const

/** How a changed prompt reaches the model: `'replace'` rewrites node 0; `'in-history'` appends it after the cached history. */
export type SystemPromptUpdate = 'replace' | 'in-history'

/** Options of `createStepSurface`. */
export interface StepSurfaceOptions {
  /** The default update mode; a step's own `systemPromptUpdate` overrides it. Default `'replace'`. */
  readonly systemPromptUpdate?: SystemPromptUpdate
  /** Counts a text's tokens, for the steps' token figures and `predictedTokens`; without it a budget's `countTokens` does. */
  readonly countTokens?: (text: string) => number
  /** The cache-preserving token budget (SPEC §5): every step's `rendered`, events and figures then describe the budgeted prompt. */
  readonly budget?: BudgetOptions
  /** The provider's cache rules (`cacheRules.anthropic({ model })`, …), for `expectedCachedTokens`; needs a `countTokens` (or a budget's). */
  readonly cacheRules?: CacheRules
}

/** What the loop knows about one model step. */
export interface StepInput {
  /** The step's assembly (normally from `assemble()`, which adds memo and layer info). */
  readonly assembly: Pick<PromptAssembly, 'sections' | 'contexts' | 'variables' | 'tools'>
  /** The request config (model, sampling, …): a JSON-serializable plain object. Default `{}`. */
  readonly config?: Readonly<Record<string, unknown>>
  /** Overrides the surface's `systemPromptUpdate` for this step only. */
  readonly systemPromptUpdate?: SystemPromptUpdate
  /** Messages in the cached history, where an `'in-history'` update is appended: required then (at least 1 after the first step). */
  readonly historyLength?: number
  /** `true` when compaction rewrote the history since the previous step. */
  readonly compacted?: boolean
}

/** A step surface: one per agent loop (one prompt stream). */
export interface StepSurface {
  /**
   * Records one model step. Throws a `TypeError` for a bad option, rethrows render errors, and throws an
   * error naming `countTokens` for a bad count; a call that throws changes nothing (two-phase commit).
   */
  step(input: StepInput): StepResult
  /**
   * Records what the provider reported for the latest step as a `UsageRecord`. Throws a `TypeError`
   * naming a bad field (see `usageRecordOf`), and an `Error` before the first step.
   *
   * @example
   * ```ts
   * import Anthropic from '@anthropic-ai/sdk'
   * import { toAnthropic, usageFromAnthropic } from 'promptloom'
   *
   * const result = surface.step({ assembly })
   * const request = toAnthropic({ assembly, rendered: result.rendered, messages: [{ role: 'user', content: 'Which test fails?' }] })
   * const reply = await new Anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, ...request })
   * const usage = surface.observeUsage(usageFromAnthropic(reply.usage))
   * console.log(`cached ${usage.cachedInputTokens} of ${usage.inputTokens} input tokens`)
   * ```
   */
  observeUsage(usage: ObservedUsage): UsageRecord
}

/**
 * Creates the step surface (SPEC §3): a pure state machine that turns each step's assembly into session-log events
 * (`system/message`, `request/header`, `context/snapshot`, each when what it records changed) and a KV-cache prefix
 * report. Throws a `TypeError` for a bad option (a bad `budget` names its field).
 *
 * @example
 * ```ts
 * import { createStepSurface } from 'promptloom'
 *
 * const surface = createStepSurface() // one per agent loop
 * const result = surface.step({ assembly: await app.systemPrompt.assemble({ scope: agent }) })
 * console.log(`${result.reusablePrefixLength} chars reusable, changed: ${result.changedSections.join(', ')}`)
 * ```
 */
export function createStepSurface(options: StepSurfaceOptions = {}): StepSurface {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`createStepSurface options must be an object (got ${describeValue(options)})`)
  }
  const defaultMode = updateMode('createStepSurface', options.systemPromptUpdate) ?? 'replace'
  const { countTokens } = options
  if (countTokens !== undefined && typeof countTokens !== 'function') {
    throw optionError('createStepSurface', 'countTokens', 'a function (text) => number', countTokens)
  }
  const budget = options.budget === undefined ? undefined : new TokenBudget(options.budget)
  const budgetCount = options.budget?.countTokens
  const rules = options.cacheRules === undefined ? undefined : checkCacheRules(options.cacheRules)
  if (rules !== undefined && countTokens === undefined && budgetCount === undefined) {
    throw new TypeError(
      'createStepSurface option "cacheRules" needs a "countTokens" option (text) => number: the expected cached tokens are counted with it',
    )
  }
  const counts = new StepCounts(countTokens, budgetCount, rules)
  let counted: Pick<StepResult, 'reusablePrefixTokens' | 'expectedCachedTokens'> = {}
  let steps = 0
  let prompt = NO_PROMPT
  // The text of node 0 and the system text the model received last; undefined before the first step.
  let node0: string | undefined
  let latest: string | undefined
  let header: HeaderState | undefined
  let snapshot: string | undefined
  const reported = new ReportedWarnings()

  return {
    step(input: StepInput): StepResult {
      if (typeof input !== 'object' || input === null) {
        throw new TypeError(`step input must be an object with an assembly (got ${describeValue(input)})`)
      }
      const { assembly } = input
      if (typeof assembly !== 'object' || assembly === null || !Array.isArray(assembly.tools)) {
        throw optionError('step', 'assembly', 'a prompt assembly with a tools array', assembly, '; pass the result of systemPrompt.assemble()')
      }
      checkShape(STEP_ASSEMBLY, assembly, ITEMS)
      const first = steps === 0
      const mode = updateMode('step', input.systemPromptUpdate) ?? defaultMode
      const historyLength = mode === 'in-history' ? requireHistoryLength(input.historyLength, first ? 0 : 1) : undefined
      if (input.compacted !== undefined && typeof input.compacted !== 'boolean') {
        throw optionError('step', 'compacted', 'a boolean', input.compacted)
      }
      const compacted = input.compacted === true
      const configJson = configJsonOf(input.config)

      // Everything that can throw happens before any state is touched.
      const full = render(assembly)
      const plan = budget?.plan(full, assembledFor(assembly)?.scope)
      const rendered = plan === undefined ? full : plan.rendered
      const { text } = rendered
      const contextText = renderContextSnapshot(assembly)
      const compared = prefixReportOf(prompt, rendered)
      const warnings = lintStability(rendered, compared.changedSet, prompt.changed, reported)

      // The first render goes to node 0 even when empty; compaction drops in-history appends (the model holds node 0 again).
      const events: SurfaceEvent[] = []
      let nextNode0 = node0
      let nextLatest = compacted ? node0 : latest
      if (first || (text !== nextLatest && mode === 'replace')) {
        events.push({ type: 'system/message', op: first ? 'append' : 'replace', node: 0, text })
        nextNode0 = nextLatest = text
      } else if (text !== nextLatest && text !== '') {
        events.push({ type: 'system/message', op: 'append', node: historyLength!, text })
        nextLatest = text
      }

      const nextHeader = headerStateOf(assembly.tools, configJson, header)
      const { toolsChanged, configChanged, reason, tools } = headerChange(header, nextHeader)
      const reusable = toolsChanged || configChanged ? { length: 0, bytes: 0 } : compared
      const measured = counts.measure({
        plan,
        rendered,
        stableLength: compared.whole,
        reusableLength: reusable.length,
        fresh: first || toolsChanged || configChanged,
        toolsJson: `[${nextHeader.toolJson.join(',')}]`,
      })
      const cacheBreak = cacheBreakOf({
        previous: prompt.rendered,
        current: rendered,
        stableLength: compared.length,
        tools,
        configChanged,
        withheldBefore: budget?.withheld ?? [],
        withheldNow: plan?.withheld ?? [],
      })
      if (reason !== undefined) {
        events.push({
          type: 'request/header',
          config: deepFreeze(JSON.parse(nextHeader.configJson)) as Readonly<Record<string, unknown>>,
          tools: nextHeader.toolJson.map((json) => deepFreeze(JSON.parse(json)) as ToolSchema),
          reason,
        })
      }
      const contextBaseline = compacted ? undefined : snapshot
      const recordContext = contextText !== '' && contextText !== contextBaseline
      if (recordContext) events.push({ type: 'context/snapshot', text: contextText, sections: renderContextSections(assembly) })

      // Commit (nothing below throws).
      if (plan !== undefined) budget!.commit(plan)
      measured.commit()
      steps++
      prompt = compared.next
      node0 = nextNode0
      latest = nextLatest
      header = nextHeader
      snapshot = recordContext ? contextText : contextBaseline
      reported.commit(warnings)
      counted = measured.fields
      return {
        step: steps,
        compacted,
        events,
        stablePrefixLength: compared.length,
        stablePrefixBytes: compared.bytes,
        changedSections: compared.changedSections,
        warnings: [...warnings, ...(plan?.warnings ?? [])],
        rendered,
        toolsChanged,
        configChanged,
        reusablePrefixLength: reusable.length,
        reusablePrefixBytes: reusable.bytes,
        ...measured.fields,
        ...(plan === undefined ? {} : { withheld: plan.withheld, overBudget: plan.overBudget }),
        ...(cacheBreak === undefined ? {} : { cacheBreak }),
        ...(compared.changedSections.length > 0 ? { firstChangedSection: compared.changedSections[0]! } : {}),
      }
    },

    observeUsage(usage: ObservedUsage): UsageRecord {
      if (steps === 0) {
        throw new Error('observeUsage was called before the first step; call surface.step() for the request, then report its usage')
      }
      return usageRecordOf(usage, steps, counted.reusablePrefixTokens, counted.expectedCachedTokens)
    },
  }
}

function updateMode(subject: string, value: unknown): SystemPromptUpdate | undefined {
  if (value === undefined || value === 'replace' || value === 'in-history') return value
  throw optionError(subject, 'systemPromptUpdate', "'replace' or 'in-history'", value)
}

function requireHistoryLength(value: unknown, min: 0 | 1): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value
  const rule = min === 0 ? 'a non-negative integer' : 'an integer of at least 1 after the first step (node 0 holds the system message)'
  const hint = '; pass the number of messages in the cached history, where the updated prompt is appended'
  throw optionError('step', 'historyLength', `${rule} when systemPromptUpdate is 'in-history'`, value, hint)
}

function configJsonOf(config: unknown): string {
  if (config === undefined) return '{}'
  const proto = typeof config === 'object' && config !== null ? Object.getPrototypeOf(config) : undefined
  let json: string | undefined
  try {
    json = proto === Object.prototype || proto === null ? JSON.stringify(config) : undefined
  } catch (error) {
    throw new TypeError(`step option "config" must be JSON-serializable for the session log (${String(error)})`)
  }
  if (json?.[0] === '{') return json
  const hint = '; a Map, a class instance or a toJSON() returning no object would not be logged as its fields'
  throw optionError('step', 'config', 'a plain object whose JSON is an object', config, hint)
}
