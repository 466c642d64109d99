/** A request the simulated provider rejects: the server answers `status` with that provider's error body. */
export class ProviderError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
  ) {
    super(message)
    this.name = 'ProviderError'
  }
}

/** A 400 `invalid_request_error`. */
export function badRequest(message: string): ProviderError {
  return new ProviderError(400, message)
}
