import { APIError, APIException } from '@apple/app-store-server-library';
import { classifyHttpFailure, ProviderError, ProviderRejectedError, ProviderUnreachableError } from '../errors';

export const PROVIDER = 'store_ios';

/** A short, secret-free description of a fetch failure (refused, reset, timeout). */
export function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return 'network error';
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? err.message;
}

/**
 * The Server API's Retry-After is a UNIX time in ms (Apple's "Identifying rate limits"), not
 * seconds: as the seconds from now the shared classifier reads.
 */
function retryAfterSeconds(header?: string | null): string | null | undefined {
  const n = header ? Number(header) : NaN;
  return Number.isFinite(n) && n > 1e11 ? String(Math.max(1, Math.ceil((n - Date.now()) / 1000))) : header;
}

/**
 * Map what the official App Store Server API client throws into our three classes:
 * its APIException (status + Apple error code), the fetch failures our subclass lets
 * through, and its "Unexpected response body format" for a body it cannot validate.
 */
export function serverApiFailure(err: unknown, retryAfter?: string | null): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof APIException) {
    const status = err.httpStatusCode;
    const code = err.apiError ?? undefined;
    const name = code !== undefined ? (APIError[code as number] ?? String(code)) : undefined;
    const reason = [name, err.errorMessage].filter(Boolean).join(': ') || `HTTP ${status}`;
    if (status === 429 || status >= 500)
      return classifyHttpFailure(PROVIDER, status, reason, retryAfterSeconds(retryAfter));
    return new ProviderRejectedError(PROVIDER, reason, { status, code: code !== undefined ? String(code) : undefined });
  }
  if (err instanceof Error && err.message === 'Unexpected response body format') {
    return new ProviderUnreachableError(PROVIDER, 'App Store Server API answered with an unexpected body');
  }
  return new ProviderUnreachableError(PROVIDER, `App Store Server API unreachable: ${describeNetworkError(err)}`);
}
