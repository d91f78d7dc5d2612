import { ApplicationFailure } from '@temporalio/activity';
import { ProviderError } from '../providers/errors';

/**
 * Translate a provider error into the Temporal failure that makes the workflow do the right
 * thing: unreachable → retry with backoff; rate limited → retry after the provider's delay;
 * rejected → do not retry. The message carries the provider's reason, never a credential.
 */
export function toActivityFailure(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  const details = [
    { provider: err.provider, error_class: err.errorClass, reason: err.reason, status: err.status ?? null },
  ];
  if (err.errorClass === 'rejected') {
    return ApplicationFailure.create({ type: 'ProviderRejected', message: err.message, nonRetryable: true, details });
  }
  return ApplicationFailure.create({
    type: err.errorClass === 'rate_limited' ? 'ProviderRateLimited' : 'ProviderUnreachable',
    message: err.message,
    nonRetryable: false,
    nextRetryDelay:
      err.errorClass === 'rate_limited' && err.retryAfterMs ? afterWithJitter(err.retryAfterMs) : undefined,
    details,
  });
}

/**
 * The provider's Retry-After plus up to a quarter more, at random: calls refused in the same
 * window otherwise all come back at the same instant and fill the next window together, so an
 * unlucky call can be refused on every attempt. Never less than the provider asked for.
 */
function afterWithJitter(retryAfterMs: number): number {
  return Math.round(retryAfterMs * (1 + Math.random() / 4));
}
