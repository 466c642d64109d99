/**
 * A plain greedy model of the token budget rule (SPEC §5 and docs/design.md "Token
 * budget"), one question at a time, recounting the whole joined text on every
 * question. Shared by the module-level and the surface-level properties.
 */

/** What the model needs of a section, in prompt order. */
export interface ModelSpec {
  readonly name: string
  readonly text: string
  readonly priority: number
  readonly required: boolean
  readonly complete: boolean
}

/** A section the budget may withhold: neither required nor complete. */
export const movable = (spec: ModelSpec): boolean => !spec.required && !spec.complete

/**
 * The model's state is the withheld set it last decided; assign `withheld` to
 * commit a decision. `countPrompt` counts the sent sections' texts (default:
 * `countTokens` of their joined text, right for an additive tokenizer).
 */
export class GreedyModel<Spec extends ModelSpec = ModelSpec> {
  withheld = new Set<string>()
  constructor(
    readonly maxTokens: number,
    readonly headroom: number,
    readonly countTokens: (text: string) => number,
    readonly countPrompt: (texts: readonly string[]) => number = (texts) => countTokens(texts.join('\n\n')),
  ) {}

  /** The budget's answer for `specs` (the unbudgeted prompt's sections, in order); changes nothing. */
  decide(specs: readonly Spec[]): { withheld: Set<string>; text: string; overBudget: boolean } {
    const index = (spec: Spec) => specs.indexOf(spec)
    // x is withheld before y: lower priority, or equal priority and later in the prompt
    const before = (x: Spec, y: Spec) => x.priority < y.priority || (x.priority === y.priority && index(x) > index(y))
    const textsWithout = (out: Set<string>) => specs.filter((spec) => !out.has(spec.name)).map((spec) => spec.text)
    const textWithout = (out: Set<string>) => textsWithout(out).join('\n\n')
    const tokensWithout = (out: Set<string>) => this.countPrompt(textsWithout(out))
    const out = new Set(specs.filter((spec) => movable(spec) && this.withheld.has(spec.name)).map((spec) => spec.name))
    // never send a section that ranks below a withheld one
    for (const spec of specs) {
      if (movable(spec) && specs.some((other) => out.has(other.name) && before(spec, other))) out.add(spec.name)
    }
    // over budget: withhold the lowest priority (the later among equals) one at a time
    while (tokensWithout(out) > this.maxTokens) {
      const candidates = specs.filter((spec) => movable(spec) && !out.has(spec.name))
      if (candidates.length === 0) break
      out.add(candidates.reduce((x, y) => (before(y, x) ? y : x)).name)
    }
    const overBudget = tokensWithout(out) > this.maxTokens
    // room within the headroom: restore the highest priority one at a time; the first that does not fit stops it
    while (!overBudget && out.size > 0) {
      const held = specs.filter((spec) => out.has(spec.name))
      const next = held.reduce((x, y) => (before(x, y) ? y : x))
      const trial = new Set(out)
      trial.delete(next.name)
      if (tokensWithout(trial) > this.maxTokens * (1 - this.headroom)) break
      out.delete(next.name)
    }
    return { withheld: out, text: textWithout(out), overBudget }
  }
}
