import Stripe from 'stripe';
import { ProviderError, ProviderRateLimitedError, ProviderRejectedError, ProviderUnreachableError } from '../errors';

const PROVIDER = 'psp_a';

/** Stripe masks keys in its messages, but never let a key-shaped string through into a reason. */
export function redact(text: string): string {
  return text
    .replace(/\b(sk|rk|pk)_(test|live)_[A-Za-z0-9*]+/g, '$1_$2_[redacted]')
    .replace(/\bwhsec_[A-Za-z0-9]+/g, 'whsec_[redacted]');
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const v = (headers as Record<string, unknown>)[name];
  return Array.isArray(v) ? String(v[0]) : typeof v === 'string' ? v : undefined;
}

/**
 * stripe-node's errors → the three classes workflows act on. Connection failures and
 * 5xx are retryable, 429 carries Stripe's Retry-After, every other 4xx is a rejection
 * whose reason is Stripe's own type/code/message.
 */
export function toProviderError(err: unknown): unknown {
  if (err instanceof ProviderError) return err;
  if (!(err instanceof Stripe.errors.StripeError)) return err;
  const status = err.statusCode;
  const reason = redact(`${err.rawType ?? err.type}${err.code ? `/${err.code}` : ''}: ${err.message}`);
  if (err instanceof Stripe.errors.StripeConnectionError || status === undefined || status >= 500) {
    return new ProviderUnreachableError(PROVIDER, reason, { status });
  }
  if (status === 429 || err instanceof Stripe.errors.StripeRateLimitError) {
    const secs = Number(header(err.headers, 'retry-after'));
    return new ProviderRateLimitedError(PROVIDER, reason, {
      retryAfterMs: Number.isFinite(secs) ? secs * 1000 : undefined,
    });
  }
  return new ProviderRejectedError(PROVIDER, reason, { status, code: err.code });
}

/** Run one provider call and translate whatever it throws. */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toProviderError(err);
  }
}

export function isMissing(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.statusCode === 404 && err.code === 'resource_missing';
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.code === 'resource_already_exists';
}

export function rejected(reason: string, code?: string): ProviderRejectedError {
  return new ProviderRejectedError(PROVIDER, reason, { code });
}
