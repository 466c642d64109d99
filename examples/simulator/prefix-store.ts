import { chain, sha256 } from './prompt-units.js'

/**
 * The token prefixes one cache holds, in whole units of `granularity` tokens: a prefix is stored as the
 * chained digest of its units, so a lookup finds the longest stored prefix of a prompt in one pass
 * from its end. Entries expire at the time given when they were last stored.
 */
export class PrefixStore {
  readonly #expiry = new Map<string, number>()

  constructor(readonly granularity: number) {}

  /** The digests of `tokens`' prefixes ending at each whole unit, seeded by `scope` (the model). */
  stepsOf(scope: string, tokens: readonly number[]): string[] {
    const steps: string[] = []
    let digest = sha256(scope)
    for (let end = this.granularity; end <= tokens.length; end += this.granularity) {
      digest = chain(digest, tokens.slice(end - this.granularity, end).join(','))
      steps.push(digest)
    }
    return steps
  }

  /** Tokens in the longest live stored prefix among `steps` (a multiple of the granularity; 0 when none). */
  longest(steps: readonly string[], now: number): number {
    for (let step = steps.length; step > 0; step--) {
      const expiresAt = this.#expiry.get(steps[step - 1]!)
      if (expiresAt !== undefined && now < expiresAt) return step * this.granularity
    }
    return 0
  }

  /** Stores (or refreshes) every prefix in `steps` until `expiresAt`. */
  store(steps: readonly string[], expiresAt: number): void {
    for (const step of steps) this.#expiry.set(step, expiresAt)
  }
}
