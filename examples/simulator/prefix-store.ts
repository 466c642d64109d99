import { createHash } from 'node:crypto'

/** A prompt's tokens, each unit's tokens concatenated in order. */
export function concatTokens(units: readonly (readonly number[])[]): Uint32Array {
  const tokens = new Uint32Array(units.reduce((sum, unit) => sum + unit.length, 0))
  let offset = 0
  for (const unit of units) {
    tokens.set(unit, offset)
    offset += unit.length
  }
  return tokens
}

/**
 * The token prefixes one cache holds, in whole units of `granularity` tokens: a prefix is stored as the
 * chained SHA-256 of its units, so a lookup finds the longest stored prefix of a prompt in one pass
 * from its end. Entries expire at the time given when they were last stored.
 */
export class PrefixStore {
  readonly #expiry = new Map<string, number>()

  constructor(readonly granularity: number) {}

  /** The digests of `tokens`' prefixes ending at each whole unit, seeded by `scope` (the model). */
  stepsOf(scope: string, tokens: Uint32Array): string[] {
    const steps: string[] = []
    let digest = createHash('sha256').update(scope).digest()
    for (let end = this.granularity; end <= tokens.length; end += this.granularity) {
      digest = createHash('sha256').update(digest).update(tokens.subarray(end - this.granularity, end)).digest()
      steps.push(digest.toString('base64'))
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
