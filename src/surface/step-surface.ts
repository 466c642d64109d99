import { describeValue } from '../assembly/errors.js'
import { comparePrompts, NO_PROMPT } from './prefix-report.js'
import { render, renderContextSections, renderContextSnapshot, type RenderedContextSection } from '../render/render.js'
import { frozenJson, headerChange, headerStateOf, toolDiff, type HeaderState } from './request-header.js'
import { lintRestored } from './restored-lint.js'
import { lintStability, ReportedWarnings, type StabilityWarning } from './stability-lint.js'
import { configJsonOf, optionalBoolean, requireHistoryLength, updateMode } from './step-options.js'
import { createTokenBudget, type BudgetPlan, type BudgetWarning } from './budget.js'
import type { BudgetOptions } from './budget-options.js'
import { budgetFigures, textFigures, type PromptCountMemo, type TokenFigures } from './step-tokens.js'
import type { RenderedPrompt } from '../render/rendered-prompt.js'
import { checkCacheRules, type CacheRules } from './cache-rules.js'
import { cacheBreakOf, type CacheBreak } from './cache-break.js'
import { checkedCounter, expectCache, NO_EXPECTATION, type CacheExpectation, type CacheNote, type ExpectationState } from './cache-expectation.js'
import type { PromptAssembly, ToolSchema } from '../assembly/types.js'
import { assembledFor } from '../assembly/provenance.js'

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

/** A finding on a step result: the cache-stability lint's, or the token budget's. */
export type StepWarning = StabilityWarning | BudgetWarning

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

/** The rendered system prompt as a surface message. */
export interface SystemMessageEvent {
  /** The event kind. */
  readonly type: 'system/message'
  /** `'append'` adds a message at `node`; `'replace'` rewrites node 0. */
  readonly op: 'append' | 'replace'
  /** The surface node: 0, or the history length for an in-history update. */
  readonly node: number
  /** The rendered system prompt. */
  readonly text: string
}

/** The request's config and tool declarations (never the prompt). */
export interface RequestHeaderEvent {
  /** The event kind. */
  readonly type: 'request/header'
  /** A deep-frozen JSON copy of the step's config. */
  readonly config: Readonly<Record<string, unknown>>
  /** Deep-frozen JSON copies of the step's tools, in assembly order. */
  readonly tools: readonly ToolSchema[]
  /** `'initial'`, or what changed: `tools changed (added grep; removed ls; changed bash; reordered)`, `config changed`, joined by `; `. */
  readonly reason: string
}

/** A runtime-context snapshot, recorded after the retained history. */
export interface ContextSnapshotEvent {
  /** The event kind. */
  readonly type: 'context/snapshot'
  /** `renderContextSnapshot(assembly)`. */
  readonly text: string
  /** `renderContextSections(assembly)`. */
  readonly sections: readonly RenderedContextSection[]
}

/** One log operation produced by a step. */
export type SurfaceEvent = SystemMessageEvent | RequestHeaderEvent | ContextSnapshotEvent

/** What one step did to the log and to the reusable prompt prefix. */
export interface StepResult {
  /** 1-based step number on this surface. */
  readonly step: number
  /** The step's `compacted` flag, echoed for the session log. */
  readonly compacted: boolean
  /** In order: `system/message`, `request/header`, `context/snapshot`, each at most once. */
  readonly events: SurfaceEvent[]
  /** UTF-16 code units of the rendered prompt identical to the previous step's (0 on the first step). */
  readonly stablePrefixLength: number
  /** UTF-8 bytes of that prefix, cut back to whole code points. */
  readonly stablePrefixBytes: number
  /**
   * Sections whose rendered output differs from the previous step's (a missing
   * section counts as empty output), plus one that only moved to where the
   * prompt first diverges; in prompt order, a removed section where it was.
   */
  readonly changedSections: string[]
  /** `changedSections[0]`: the section where the prompt first diverges; absent when nothing changed. */
  readonly firstChangedSection?: string
  /**
   * New cache-stability findings (each reported once per surface), then the
   * budget's: the sections withheld or restored this step, and `over-budget`
   * on every step the prompt cannot fit.
   */
  readonly warnings: StepWarning[]
  /** The `RenderedPrompt` that was compared and sent: `render(assembly)`, less any withheld sections. */
  readonly rendered: RenderedPrompt
  /** The tool declarations serialize differently from the previous step's (`false` on the first step). */
  readonly toolsChanged: boolean
  /** The config serializes differently from the previous step's (`false` on the first step). */
  readonly configChanged: boolean
  /**
   * UTF-16 code units of the request prefix a provider cache can reuse:
   * providers cache tools → system → messages, so 0 when the tools or config
   * changed, else `stablePrefixLength`.
   */
  readonly reusablePrefixLength: number
  /** UTF-8 bytes of that prefix: 0 when the tools or config changed, else `stablePrefixBytes`. */
  readonly reusablePrefixBytes: number
  /** `countTokens` of the stable prefix's text (only with a `countTokens` option). */
  readonly stablePrefixTokens?: number
  /** `countTokens` of the reusable prefix's text: 0 when the tools or config changed (only with `countTokens`). */
  readonly reusablePrefixTokens?: number
  /** `countTokens` of the whole rendered prompt (only with a `countTokens` option). */
  readonly promptTokens?: number
  /**
   * The token count of each sent part (`rendered.parts`), in prompt order, by
   * the budget's rule (each part counted on its own); only with a `budget`
   * whose `countTokens` also gives the token figures.
   */
  readonly partTokens?: readonly number[]
  /** The sections the budget withholds from this step's prompt, in prompt order (only with a `budget`). */
  readonly withheld?: readonly string[]
  /** The prompt exceeds `maxTokens` although every withholdable section is withheld (only with a `budget`). */
  readonly overBudget?: boolean
  /**
   * The system-prompt tokens the provider is expected to serve from its cache
   * on this step, by its `cacheRules` (only with `cacheRules`; SPEC §4.3).
   */
  readonly expectedCachedTokens?: number
  /** Why a reusable prefix is not expected to be cached: `'below-minimum'` or `'no-breakpoint'` (only with `cacheRules`). */
  readonly cacheNote?: CacheNote
  /** Why this step lost reuse: the first cause in prefix order; absent when nothing was lost (SPEC §3). */
  readonly cacheBreak?: CacheBreak
}

/** What a provider reported about one step's prompt tokens (see `usageFromAnthropic` / `usageFromOpenAI`). */
export interface ObservedUsage {
  /** Every prompt token the provider processed, cached ones included. */
  readonly inputTokens: number
  /** The prompt tokens read from the provider's cache. */
  readonly cachedInputTokens: number
  /** The prompt tokens written to the cache (Anthropic reports them). */
  readonly cacheWriteTokens?: number
  /** Of those, the ones written with Anthropic's 5-minute TTL (when the provider splits them). */
  readonly cacheWrite5mTokens?: number
  /** Of those, the ones written with Anthropic's 1-hour TTL (when the provider splits them). */
  readonly cacheWrite1hTokens?: number
}

/** The record `observeUsage` returns and the session log stores beside its step. */
export interface UsageRecord extends ObservedUsage {
  /** The record kind. */
  readonly type: 'usage'
  /** The step the usage belongs to (the latest step taken). */
  readonly step: number
  /** That step's `reusablePrefixTokens`: what promptloom predicted the cache could reuse (only with `countTokens`). */
  readonly predictedTokens?: number
  /** That step's `expectedCachedTokens`: what the provider's rules let it serve from cache (only with `cacheRules`). */
  readonly expectedTokens?: number
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
  const cacheCount = rules === undefined ? undefined : checkedCounter((countTokens ?? budgetCount)!, countTokens === undefined ? 'budget countTokens' : 'createStepSurface option "countTokens"')
  let expectationState: ExpectationState = NO_EXPECTATION
  let expected: number | undefined
  // The figures follow the budget's rule unless a different countTokens was given for them.
  const figuresFromBudget = budget !== undefined && (countTokens === undefined || countTokens === budgetCount)
  let countMemo: PromptCountMemo | undefined
  let predicted: number | undefined
  let steps = 0
  let prompt = NO_PROMPT
  /** The text of node 0 and the system text the model received last; `undefined` before the first step. */
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
      const plan: BudgetPlan | undefined = budget?.plan(full, budgetShares ? assembledFor(assembly)?.scope : undefined)
      const rendered = plan === undefined ? full : plan.rendered
      const { text } = rendered
      const contextText = renderContextSnapshot(assembly)
      const first = steps === 0
      const compared = comparePrompts(prompt, rendered, !first)
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
      const reason = header === undefined ? 'initial' : headerChange(header, nextHeader)
      const toolsChanged = header !== undefined && !sameStrings(header.toolJson, nextHeader.toolJson)
      const configChanged = header !== undefined && header.configJson !== nextHeader.configJson
      const reusable = toolsChanged || configChanged ? { length: 0, bytes: 0 } : compared
      let tokens: TokenFigures | undefined
      let nextMemo = countMemo
      if (figuresFromBudget) tokens = budgetFigures(plan!, budgetCount!, compared.length, reusable.length)
      else if (countTokens !== undefined) {
        const counted = textFigures(countTokens, text, compared.length, reusable.length, countMemo)
        tokens = counted.figures
        nextMemo = counted.memo
      }
      let expectation: { readonly expectation: CacheExpectation; readonly next: ExpectationState } | undefined
      if (rules !== undefined) {
        expectation = expectCache(
          {
            rules,
            count: cacheCount!,
            rendered,
            fresh: first || toolsChanged || configChanged,
            stableLength: compared.length,
            stablePrefixTokens: tokens!.stablePrefixTokens,
            reusablePrefixTokens: tokens!.reusablePrefixTokens,
            promptTokens: tokens!.promptTokens,
            toolsJson: `[${nextHeader.toolJson.join(',')}]`,
          },
          expectationState,
        )
      }
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
      countMemo = nextMemo
      steps++
      prompt = compared.next
      node0 = nextNode0
      latest = nextLatest
      header = nextHeader
      snapshot = recordContext ? contextText : contextBaseline
      reported.commit(warnings)
      predicted = tokens?.reusablePrefixTokens
      expected = expectation?.expectation.expectedCachedTokens
      if (expectation !== undefined) expectationState = expectation.next
      const result: StepResult = {
        step: steps,
        compacted,
        events,
        stablePrefixLength: compared.length,
        stablePrefixBytes: compared.bytes,
        changedSections: compared.changedSections,
        warnings: plan === undefined || plan.warnings.length === 0 ? warnings.map((pending) => pending.warning) : [...warnings.map((pending) => pending.warning), ...plan.warnings],
        rendered,
        toolsChanged,
        configChanged,
        reusablePrefixLength: reusable.length,
        reusablePrefixBytes: reusable.bytes,
        ...tokens,
        ...(figuresFromBudget ? { partTokens: plan!.partTokens } : {}),
        ...(plan === undefined ? {} : { withheld: plan.withheld, overBudget: plan.overBudget }),
        ...expectation?.expectation,
        ...(cacheBreak === undefined ? {} : { cacheBreak }),
      }
      if (compared.changedSections.length > 0) {
        return { ...result, firstChangedSection: compared.changedSections[0]! }
      }
      return result
    },

    observeUsage(usage: ObservedUsage): UsageRecord {
      if (steps === 0) {
        throw new Error('observeUsage was called before the first step; call surface.step() for the request, then report its usage')
      }
      if (typeof usage !== 'object' || usage === null) {
        throw new TypeError(`observeUsage expects { inputTokens, cachedInputTokens, cacheWriteTokens? } (got ${describeValue(usage)})`)
      }
      const inputTokens = tokenCount('inputTokens', usage.inputTokens)
      const cachedInputTokens = tokenCount('cachedInputTokens', usage.cachedInputTokens)
      if (cachedInputTokens > inputTokens) {
        throw new TypeError(
          `observeUsage field "cachedInputTokens" (${cachedInputTokens}) exceeds "inputTokens" (${inputTokens}); cached tokens are part of the input tokens — read the usage with usageFromAnthropic, usageFromOpenAI, usageFromDeepSeek or usageFromAISDK`,
        )
      }
      const optional = (field: 'cacheWriteTokens' | 'cacheWrite5mTokens' | 'cacheWrite1hTokens') =>
        usage[field] === undefined ? {} : { [field]: tokenCount(field, usage[field]) }
      const record: UsageRecord = {
        type: 'usage',
        step: steps,
        inputTokens,
        cachedInputTokens,
        ...optional('cacheWriteTokens'),
        ...optional('cacheWrite5mTokens'),
        ...optional('cacheWrite1hTokens'),
        ...(predicted === undefined ? {} : { predictedTokens: predicted }),
        ...(expected === undefined ? {} : { expectedTokens: expected }),
      }
      return record
    },
  }
}

const NO_NAMES: readonly string[] = Object.freeze([])

/** The tool names added, removed and changed between two headers (a reordering alone lists none). */
function changedToolNames(before: HeaderState, after: HeaderState): NonNullable<CacheBreak['tools']> {
  const { added, removed, changed } = toolDiff(before, after)
  return Object.freeze({ added: Object.freeze(added), removed: Object.freeze(removed), changed: Object.freeze(changed) })
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

function tokenCount(field: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
  throw new TypeError(
    `observeUsage field "${field}" must be a non-negative finite number (got ${describeValue(value)}); read it with usageFromAnthropic, usageFromOpenAI, usageFromDeepSeek or usageFromAISDK`,
  )
}
