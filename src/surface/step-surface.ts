import { describeValue } from '../assembly/errors.js'
import { assembledFor } from '../assembly/provenance.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { render, renderContextSections, renderContextSnapshot } from '../render/render.js'
import { createTokenBudget } from './budget.js'
import type { BudgetOptions } from './budget-options.js'
import { cacheBreakOf, type CacheBreak } from './cache-break.js'
import { checkCacheRules, type CacheRules } from './cache-rules.js'
import { NO_PROMPT, prefixReportOf } from './prefix-report.js'
import { frozenJson, headerChange, headerStateOf, toolDiff, type HeaderChange, type HeaderState } from './request-header.js'
import { lintRestored } from './restored-lint.js'
import { lintStability, ReportedWarnings } from './stability-lint.js'
import { configJsonOf, optionalBoolean, requireHistoryLength, updateMode } from './step-options.js'
import { StepCounts } from './step-tokens.js'
import type { StepResult } from './step-result.js'
import type { SurfaceEvent } from './surface-events.js'
import { usageRecordOf, type ObservedUsage, type UsageRecord } from './usage-record.js'

/**
 * How a changed system prompt reaches the model: `'replace'` rewrites
 * surface node 0; `'in-history'` appends the new prompt after the cached
 * history so the cached prefix (node 0 included) stays valid.
 */
export type SystemPromptUpdate = 'replace' | 'in-history'

/** Options of `createStepSurface`. */
export interface StepSurfaceOptions {
  /** The default update mode; a step's own `systemPromptUpdate` overrides it. Default `'replace'`. */
  readonly systemPromptUpdate?: SystemPromptUpdate
  /**
   * Counts the tokens of a text (the model's tokenizer, or an estimate). When
   * given (or a `budget` is), each step also reports `stablePrefixTokens`,
   * `reusablePrefixTokens` and `promptTokens`, and `observeUsage` reports
   * `predictedTokens`. Without a budget, or when it is not the budget's own
   * function, it counts the joined texts; the budget's function counts by the
   * budget's rule (per part, cached by text).
   */
  readonly countTokens?: (text: string) => number
  /**
   * The cache-preserving token budget (SPEC §5): when the rendered prompt
   * exceeds `maxTokens`, sections are withheld (lowest `priority` first, the
   * later first among equals; never a `required` or `complete` one) and the
   * decision is sticky until the prompt with a section restored fits within
   * `maxTokens × (1 − headroom)`. The step's `rendered`, events and prefix
   * figures then describe the budgeted prompt. Without a `countTokens` option
   * the token figures use the budget's `countTokens`. With `shared:
   * 'prefer-unshared'` the sections after the prefix this agent shares with its
   * siblings are withheld first (the agent is the scope the step's assembly
   * was assembled for).
   */
  readonly budget?: BudgetOptions
  /**
   * The provider's cache rules (`cacheRules.anthropic({ model })`, `.openai()`,
   * `.deepseek()`): each step then reports `expectedCachedTokens` and, when a
   * reusable prefix is not expected to be cached, `cacheNote`. Needs a
   * `countTokens` (or a budget's).
   */
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
  /**
   * Messages in the cached history, where an in-history prompt update is
   * appended. Required on every `'in-history'` step: any non-negative integer
   * on the first step (whose render always goes to node 0), and at least 1
   * afterwards, because node 0 (the system message) is part of the history.
   */
  readonly historyLength?: number
  /** `true` when compaction rewrote the history since the previous step. */
  readonly compacted?: boolean
}

/** A step surface: one per agent loop (one prompt stream). */
export interface StepSurface {
  /**
   * Records one model step. Throws a `TypeError` for a bad option, rethrows
   * render errors, and throws an error naming `countTokens` when it throws or
   * returns a bad count; a call that throws changes nothing (the previous
   * prompt, the withheld set, the reported warnings and the step count stay).
   */
  step(input: StepInput): StepResult
  /**
   * Records what the provider reported for the latest step and returns it as
   * a `UsageRecord`. Throws a `TypeError` naming a field that is not a
   * non-negative finite number or more cached than input tokens, and an
   * `Error` before the first step.
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
 * Creates the step surface (SPEC §3): a pure state machine that turns each
 * step's assembly of one prompt stream into session-log events and a
 * KV-cache prefix report. Plain values in and out; no Cordis.
 *
 * - `system/message`: the first render is appended at node 0 (even when
 *   empty, so node 0 is the system message from then on). Later, a render
 *   that differs from the text the model last received replaces node 0, or,
 *   in `'in-history'` mode, is appended at `node: historyLength` — unless it
 *   is empty (an empty message tells the model nothing; no event).
 * - `request/header`: config and tools only, on the first step (`'initial'`)
 *   and whenever their JSON serialization changed.
 * - `context/snapshot`: when the non-empty snapshot differs from the last
 *   recorded one, or after `compacted: true`. An empty snapshot records nothing.
 * - `compacted: true` also assumes in-history prompt appends were compacted
 *   away: the model is taken to hold node 0's text again.
 * - `budget`: each step plans on `render(assembly)`, and everything above
 *   reads the budgeted prompt; the plan is committed only with the step.
 *
 * Throws a `TypeError` for a bad option (a bad `budget` names its field).
 *
 * @example
 * ```ts
 * import { createStepSurface } from 'promptloom'
 *
 * const surface = createStepSurface() // one per agent loop
 * for (let turn = 1; turn <= 3; turn++) {
 *   const assembly = await app.systemPrompt.assemble({ scope: agent })
 *   const result = surface.step({ assembly }) // then send result.rendered with toAnthropic, toOpenAIChat, …
 *   console.log(`step ${result.step}: ${result.reusablePrefixLength} chars reusable, changed: ${result.changedSections.join(', ')}`)
 * }
 * ```
 */
export function createStepSurface(options: StepSurfaceOptions = {}): StepSurface {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`createStepSurface options must be an object (got ${describeValue(options)})`)
  }
  const defaultMode = updateMode('createStepSurface option "systemPromptUpdate"', options.systemPromptUpdate) ?? 'replace'
  const { countTokens } = options
  if (countTokens !== undefined && typeof countTokens !== 'function') {
    throw new TypeError(`createStepSurface option "countTokens" must be a function (text) => number (got ${describeValue(countTokens)})`)
  }
  const budget = options.budget === undefined ? undefined : createTokenBudget(options.budget)
  const budgetCount = options.budget?.countTokens
  const budgetShares = options.budget?.shared === 'prefer-unshared'
  const rules = options.cacheRules === undefined ? undefined : checkCacheRules(options.cacheRules)
  if (rules !== undefined && countTokens === undefined && budgetCount === undefined) {
    throw new TypeError(
      'createStepSurface option "cacheRules" needs a "countTokens" option (text) => number: the expected cached tokens are counted with it',
    )
  }
  const counts = new StepCounts(countTokens, budgetCount, rules)
  let predicted: number | undefined
  let expected: number | undefined
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
        throw new TypeError(
          `step option "assembly" must be a prompt assembly with a tools array (got ${describeValue(assembly)}); pass the result of systemPrompt.assemble()`,
        )
      }
      const mode = updateMode('step option "systemPromptUpdate"', input.systemPromptUpdate) ?? defaultMode
      const historyLength = mode === 'in-history' ? requireHistoryLength(input.historyLength, steps === 0 ? 0 : 1) : undefined
      const compacted = optionalBoolean('compacted', input.compacted) === true
      const configJson = configJsonOf(input.config)

      // Everything that can throw happens before any state is touched.
      const full = render(assembly)
      const plan = budget?.plan(full, budgetShares ? assembledFor(assembly)?.scope : undefined)
      const rendered = plan === undefined ? full : plan.rendered
      const { text } = rendered
      const contextText = renderContextSnapshot(assembly)
      const first = steps === 0
      const compared = prefixReportOf(prompt, rendered, !first)
      const warnings = lintStability(rendered, compared.changedSet, prompt.changed, reported)
      warnings.push(...lintRestored(rendered, reported))

      const events: SurfaceEvent[] = []
      let nextNode0 = node0
      let nextLatest = compacted ? node0 : latest
      if (first) {
        events.push({ type: 'system/message', op: 'append', node: 0, text })
        nextNode0 = nextLatest = text
      } else if (text !== nextLatest) {
        if (mode === 'replace') {
          events.push({ type: 'system/message', op: 'replace', node: 0, text })
          nextNode0 = nextLatest = text
        } else if (text !== '') {
          events.push({ type: 'system/message', op: 'append', node: historyLength!, text })
          nextLatest = text
        }
      }

      const nextHeader = headerStateOf(assembly.tools, configJson, header)
      const { toolsChanged, configChanged, reason } = header === undefined ? FIRST_HEADER : headerChange(header, nextHeader)
      const reusable = toolsChanged || configChanged ? { length: 0, bytes: 0 } : compared
      const counted = counts.measure({
        plan,
        rendered,
        stableLength: compared.length,
        reusableLength: reusable.length,
        fresh: first || toolsChanged || configChanged,
        toolsJson: `[${nextHeader.toolJson.join(',')}]`,
      })
      const cacheBreak = first
        ? undefined
        : cacheBreakOf({
            previous: prompt.rendered!,
            current: rendered,
            stableLength: compared.length,
            tools: toolsChanged ? changedToolNames(header!, nextHeader) : undefined,
            configChanged,
            withheldBefore: budget?.withheld ?? NO_NAMES,
            withheldNow: plan?.withheld ?? NO_NAMES,
          })
      if (reason !== undefined) {
        events.push({
          type: 'request/header',
          config: frozenJson(nextHeader.configJson) as Readonly<Record<string, unknown>>,
          tools: nextHeader.toolJson.map((json) => frozenJson(json) as ToolSchema),
          reason,
        })
      }
      const contextBaseline = compacted ? undefined : snapshot
      const recordContext = contextText !== '' && contextText !== contextBaseline
      if (recordContext) {
        events.push({ type: 'context/snapshot', text: contextText, sections: renderContextSections(assembly) })
      }

      // Commit (nothing below throws).
      if (plan !== undefined) budget!.commit(plan)
      counted.commit()
      steps++
      prompt = compared.next
      node0 = nextNode0
      latest = nextLatest
      header = nextHeader
      snapshot = recordContext ? contextText : contextBaseline
      reported.commit(warnings)
      predicted = counted.fields.reusablePrefixTokens
      expected = counted.fields.expectedCachedTokens
      return {
        step: steps,
        compacted,
        events,
        stablePrefixLength: compared.length,
        stablePrefixBytes: compared.bytes,
        changedSections: compared.changedSections,
        warnings: [...warnings.map((pending) => pending.warning), ...(plan?.warnings ?? [])],
        rendered,
        toolsChanged,
        configChanged,
        reusablePrefixLength: reusable.length,
        reusablePrefixBytes: reusable.bytes,
        ...counted.fields,
        ...(plan === undefined ? {} : { withheld: plan.withheld, overBudget: plan.overBudget }),
        ...(cacheBreak === undefined ? {} : { cacheBreak }),
        ...(compared.changedSections.length > 0 ? { firstChangedSection: compared.changedSections[0]! } : {}),
      }
    },

    observeUsage(usage: ObservedUsage): UsageRecord {
      if (steps === 0) {
        throw new Error('observeUsage was called before the first step; call surface.step() for the request, then report its usage')
      }
      return usageRecordOf(usage, steps, predicted, expected)
    },
  }
}

const NO_NAMES: readonly string[] = Object.freeze([])
const FIRST_HEADER: HeaderChange = { toolsChanged: false, configChanged: false, reason: 'initial' }

/** The tool names added, removed and changed between two headers (a reordering alone lists none). */
function changedToolNames(before: HeaderState, after: HeaderState): NonNullable<CacheBreak['tools']> {
  const { added, removed, changed } = toolDiff(before, after)
  return Object.freeze({ added: Object.freeze(added), removed: Object.freeze(removed), changed: Object.freeze(changed) })
}
