/**
 * The three classes of provider failure that workflows act on:
 *  - unreachable: connection refused/reset, timeout, 5xx → retry
 *  - rate_limited: 429 → retry after `retryAfterMs`
 *  - rejected: 4xx other than 429 → do not retry; `reason` is recorded
 */
export type ProviderErrorClass = 'unreachable' | 'rate_limited' | 'rejected';

export class ProviderError extends Error {
  constructor(
    readonly errorClass: ProviderErrorClass,
    readonly provider: string,
    readonly reason: string,
    readonly opts: { status?: number; retryAfterMs?: number; code?: string } = {},
  ) {
    super(`${provider} ${errorClass}: ${reason}`);
    this.name = 'ProviderError';
  }
  get retryable(): boolean {
    return this.errorClass !== 'rejected';
  }
  get retryAfterMs(): number | undefined {
    return this.opts.retryAfterMs;
  }
  get status(): number | undefined {
    return this.opts.status;
  }
}

export class ProviderUnreachableError extends ProviderError {
  constructor(provider: string, reason: string, opts: { status?: number } = {}) {
    super('unreachable', provider, reason, opts);
    this.name = 'ProviderUnreachableError';
  }
}

export class ProviderRateLimitedError extends ProviderError {
  constructor(provider: string, reason: string, opts: { retryAfterMs?: number; status?: number } = {}) {
    super('rate_limited', provider, reason, { status: 429, ...opts });
    this.name = 'ProviderRateLimitedError';
  }
}

export class ProviderRejectedError extends ProviderError {
  constructor(provider: string, reason: string, opts: { status?: number; code?: string } = {}) {
    super('rejected', provider, reason, opts);
    this.name = 'ProviderRejectedError';
  }
}

/** A webhook whose signature (or timestamp, or OIDC token) does not verify. Never retried. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly provider: string,
    readonly reason: string,
  ) {
    super(`${provider} webhook rejected: ${reason}`);
    this.name = 'WebhookVerificationError';
  }
}

/** Map an HTTP status (or a network failure when status is undefined) to the error class. */
export function classifyHttpFailure(
  provider: string,
  status: number | undefined,
  reason: string,
  retryAfterHeader?: string | null,
): ProviderError {
  if (status === undefined || status >= 500) return new ProviderUnreachableError(provider, reason, { status });
  if (status === 429) {
    const secs = retryAfterHeader ? Number(retryAfterHeader) : NaN;
    return new ProviderRateLimitedError(provider, reason, {
      retryAfterMs: Number.isFinite(secs) ? secs * 1000 : undefined,
    });
  }
  return new ProviderRejectedError(provider, reason, { status });
}
