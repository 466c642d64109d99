/**
 * The step surface's token figures and expected cache reuse. With the budget's countTokens, by the
 * budget's rule (the stable prefix is its whole parts plus a count of the rest, so a steady step
 * tokenizes nothing); otherwise countTokens of the joined texts, the last prompt's count reused.
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { BudgetPlan } from './budget.js'
import { expectCache, NO_EXPECTATION, type CacheExpectation, type CacheRules, type ExpectationState } from './cache-rules.js'
import { addSafely, BUDGET_COUNTER, countWith, TokenSum } from './token-counts.js'

/** A step's `countTokens` figures. */
export interface TokenFigures {
  readonly stablePrefixTokens: number
  readonly reusablePrefixTokens: number
  readonly promptTokens: number
}

/** What one step hands the counter; `fresh`: nothing is reusable (the first step, or tools or config changed). */
export interface CountedStep {
  readonly plan: BudgetPlan | undefined
  readonly rendered: RenderedPrompt
  /** UTF-16 code units identical to the previous step's prompt, and of those the reusable ones. */
  readonly stableLength: number
  readonly reusableLength: number
  readonly fresh: boolean
  readonly toolsJson: string
}

/** The counted fields of a step result, absent where the surface has no counter. */
export interface CountedFields extends Partial<TokenFigures>, Partial<CacheExpectation> {
  readonly partTokens?: readonly number[]
}

const OPTION_COUNTER = 'createStepSurface option "countTokens"'

/** The token figures and expected cache reuse of one surface's steps. */
export class StepCounts {
  readonly #countTokens: ((text: string) => number) | undefined
  readonly #budgetCount: ((text: string) => number) | undefined
  readonly #fromBudget: boolean
  readonly #rules: CacheRules | undefined
  #memo: { readonly text: string; readonly tokens: number } | undefined
  #expectation: ExpectationState = NO_EXPECTATION

  constructor(countTokens: ((text: string) => number) | undefined, budgetCount: ((text: string) => number) | undefined, rules: CacheRules | undefined) {
    this.#countTokens = countTokens
    this.#budgetCount = budgetCount
    this.#fromBudget = budgetCount !== undefined && (countTokens === undefined || countTokens === budgetCount)
    this.#rules = rules
  }

  /** The step's fields, and the commit that keeps its memos once the step succeeded. Throws what `countWith` throws. */
  measure(step: CountedStep): { readonly fields: CountedFields; readonly commit: () => void } {
    let tokens: TokenFigures | undefined
    let memo = this.#memo
    if (this.#fromBudget) tokens = this.#budgetFigures(step)
    else if (this.#countTokens !== undefined) {
      tokens = this.#textFigures(step)
      memo = { text: step.rendered.text, tokens: tokens.promptTokens }
    }
    let expectation: ReturnType<typeof expectCache> | undefined
    if (this.#rules !== undefined) {
      const who = this.#countTokens === undefined ? BUDGET_COUNTER : OPTION_COUNTER
      const counter = (this.#countTokens ?? this.#budgetCount)!
      expectation = expectCache(
        { ...step, ...tokens!, rules: this.#rules, count: (text, subject) => countWith(counter, text, who, subject) },
        this.#expectation,
      )
    }
    const fields: CountedFields = {
      ...tokens,
      ...(this.#fromBudget ? { partTokens: step.plan!.partTokens } : {}),
      ...expectation?.expectation,
    }
    return {
      fields,
      commit: () => {
        this.#memo = memo
        if (expectation !== undefined) this.#expectation = expectation.next
      },
    }
  }

  /** The stable prefix's slice past the last whole part is never cached: it differs whenever the prefix moves. */
  #budgetFigures({ plan, stableLength, reusableLength }: CountedStep): TokenFigures {
    const { rendered, partTokens, separatorTokens, promptTokens } = plan!
    let stable = promptTokens
    if (stableLength < rendered.text.length) {
      const { parts } = rendered
      const sum = new TokenSum()
      let end = 0
      let i = 0
      for (; i < parts.length && parts[i]!.end <= stableLength; i++) {
        if (i > 0) sum.add(separatorTokens)
        sum.add(partTokens[i]!)
        end = parts[i]!.end
      }
      if (stableLength > end) {
        const subject = `the stable prefix's end in rendered part "${parts[i]?.name ?? parts[i - 1]!.name}"`
        // Only this slice can pass MAX_SAFE_INTEGER: the whole parts sum to at most promptTokens.
        addSafely(sum, countWith(this.#budgetCount!, rendered.text.slice(end, stableLength), BUDGET_COUNTER, subject), BUDGET_COUNTER)
      }
      stable = sum.value
    }
    return { stablePrefixTokens: stable, reusablePrefixTokens: reusableLength === 0 ? 0 : stable, promptTokens }
  }

  #textFigures({ rendered: { text }, stableLength, reusableLength }: CountedStep): TokenFigures {
    const count = this.#countTokens!
    const memo = this.#memo
    const whole = (): number => (memo !== undefined && memo.text === text ? memo.tokens : countWith(count, text, OPTION_COUNTER, 'the rendered prompt'))
    let stablePrefixTokens: number
    let promptTokens: number
    if (stableLength === text.length) {
      promptTokens = stablePrefixTokens = text.length === 0 ? 0 : whole()
    } else {
      stablePrefixTokens = stableLength === 0 ? 0 : countWith(count, text.slice(0, stableLength), OPTION_COUNTER, 'the stable prefix')
      promptTokens = whole()
    }
    return { stablePrefixTokens, reusablePrefixTokens: reusableLength === 0 ? 0 : stablePrefixTokens, promptTokens }
  }
}
