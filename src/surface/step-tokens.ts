/**
 * The step surface's token figures (`stablePrefixTokens`,
 * `reusablePrefixTokens`, `promptTokens`) and expected cache reuse, by one of
 * two count rules:
 *
 *   with a budget whose countTokens does the counting   the budget's count rule:
 *     the sent parts' cached counts plus one separator count between parts,
 *     summed exactly (budget-sum.ts);
 *     the stable prefix is the parts that lie wholly in it, plus a count of
 *     the rest of it (a slice of the first changed part), so a steady step
 *     tokenizes nothing and a changed step only that short slice
 *   otherwise (a `countTokens` option alone, or one that is not the budget's)
 *     countTokens of the joined texts: the stable prefix, and the whole prompt
 *     unless it is all stable; the last prompt's count is reused while its
 *     text stays the same
 *
 * `StepCounts.measure` changes nothing; the surface calls the returned
 * `commit` only when the whole step succeeded.
 */

import type { RenderedPrompt } from '../render/rendered-prompt.js'
import type { BudgetPlan } from './budget.js'
import { checkSafeTotal, TokenSum } from './budget-sum.js'
import type { CacheRules } from './cache-rules.js'
import { expectCache, NO_EXPECTATION, type CacheExpectation, type ExpectationState } from './cache-expectation.js'
import { BUDGET_COUNTER, countWith } from './token-counts.js'

/** One step's token figures. */
export interface TokenFigures {
  readonly stablePrefixTokens: number
  readonly reusablePrefixTokens: number
  readonly promptTokens: number
}

/** What one step hands the counter. */
export interface CountedStep {
  /** The budget's plan (only with a budget). */
  readonly plan: BudgetPlan | undefined
  /** The prompt sent. */
  readonly rendered: RenderedPrompt
  /** UTF-16 code units identical to the previous step's prompt, and of those the reusable ones. */
  readonly stableLength: number
  readonly reusableLength: number
  /** Nothing is reusable: the first step, or the tools or config changed. */
  readonly fresh: boolean
  /** `JSON.stringify` of the step's tools. */
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
  /** The figures follow the budget's rule unless a different countTokens was given for them. */
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

  /** The step's counted fields and the commit that keeps its memos. Throws an error naming the counter for a bad count. */
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

  /**
   * The budget's rule: the part of the stable prefix past the last whole part
   * is counted on its own (never cached: it is a different slice whenever the
   * prefix moves).
   */
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
        sum.add(countWith(this.#budgetCount!, rendered.text.slice(end, stableLength), BUDGET_COUNTER, subject))
      }
      stable = sum.value
      checkSafeTotal(stable, BUDGET_COUNTER)
    }
    return { stablePrefixTokens: stable, reusablePrefixTokens: reusableLength === 0 ? 0 : stable, promptTokens }
  }

  /** The joined-text rule; the last committed prompt's count is reused while its text is the same. */
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
