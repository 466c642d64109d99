/** The token budget's findings: what it withheld or restored this step, and an over-budget prompt. */

import type { RenderedPart } from '../render/rendered-prompt.js'
import type { BudgetWarning } from './budget.js'
import type { ValidBudgetOptions } from './budget-options.js'

/** What one budget decision did. */
export interface BudgetStep {
  readonly parts: readonly RenderedPart[]
  /** The withheld names in prompt order, and as a set. */
  readonly withheld: readonly string[]
  readonly withheldSet: ReadonlySet<string>
  readonly overBudget: boolean
  /** The tokens of the prompt sent. */
  readonly tokens: number
}

/** The step's findings against the withheld set `before` (the last committed one), in kind order. */
export function budgetWarnings(options: ValidBudgetOptions, before: ReadonlySet<string>, step: BudgetStep): BudgetWarning[] {
  const { parts, withheld, withheldSet, overBudget, tokens } = step
  const { maxTokens, restoreTokens, headroom } = options
  const warnings: BudgetWarning[] = []
  const added = withheld.filter((name) => !before.has(name))
  if (added.length > 0) {
    warnings.push(
      finding(
        'withheld',
        added,
        `token budget withheld prompt ${sectionList(added)} (${options.shared === 'prefer-unshared' ? 'sections after the prefix shared with sibling agents first, then ' : ''}lowest priority first, later first among equals) to fit maxTokens ${maxTokens}; ` +
          `the prompt is now ${tokens} tokens; raise a section's priority to keep it longer, or raise maxTokens`,
      ),
    )
  }
  const restored: string[] = []
  for (const part of parts) if (before.has(part.name) && !withheldSet.has(part.name)) restored.push(part.name)
  if (restored.length > 0) {
    warnings.push(
      finding(
        'restored',
        restored,
        `token budget restored prompt ${sectionList(restored)}: the prompt is now ${tokens} tokens, ` +
          `within ${restoreTokens} (maxTokens ${maxTokens} less ${headroom * 100}% headroom)`,
      ),
    )
  }
  if (overBudget) {
    warnings.push(
      finding(
        'over-budget',
        withheld,
        `the prompt is ${tokens} tokens, over maxTokens ${maxTokens} even with every withholdable section withheld` +
          `${withheld.length > 0 ? ` (${sectionList(withheld)})` : ''}; the rest is required or complete: shorten those sections or raise maxTokens`,
      ),
    )
  }
  return warnings
}

function finding(kind: BudgetWarning['kind'], sections: readonly string[], message: string): BudgetWarning {
return Object.freeze({ kind, sections: Object.freeze([...sections]), message })
}

function sectionList(names: readonly string[]): string {
return `${names.length === 1 ? 'section' : 'sections'} ${names.map((name) => `"${name}"`).join(', ')}`
}
