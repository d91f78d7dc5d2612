import { ProviderError, ProviderRejectedError, classifyHttpFailure } from '../errors';
import { PROVIDER } from './catalog';

interface HttpishError {
  code?: string | number;
  name?: string;
  response?: { status: number; data?: unknown; headers?: Headers | Record<string, string> };
}

function header(headers: Headers | Record<string, string> | undefined, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const rec = headers as Record<string, string>;
  return rec[name] ?? rec[name.toLowerCase()] ?? null;
}

/**
 * The reason Google puts in its error body ({error:{code,message,status}}), or the OAuth form ({error,
 * error_description}).
 */
export function googleReason(data: unknown, status: number): { reason: string; code?: string } {
  if (data && typeof data === 'object') {
    const err = (data as { error?: unknown; error_description?: unknown }).error;
    if (err && typeof err === 'object') {
      const e = err as { message?: unknown; status?: unknown };
      return {
        reason: typeof e.message === 'string' ? e.message : `HTTP ${status}`,
        code: typeof e.status === 'string' ? e.status : undefined,
      };
    }
    if (typeof err === 'string') {
      const desc = (data as { error_description?: unknown }).error_description;
      return { reason: typeof desc === 'string' ? `${err}: ${desc}` : err, code: err };
    }
  }
  if (typeof data === 'string' && data.length > 0 && data.length < 300) return { reason: data };
  return { reason: `HTTP ${status}` };
}

/**
 * Any failure of a Play call → one of the three ProviderError classes. Never passes the
 * client's own error on: a GaxiosError carries the request config, headers included.
 */
export function toProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as HttpishError;
  const res = e.response;
  if (res && typeof res.status === 'number') {
    const { reason, code } = googleReason(res.data, res.status);
    if (res.status < 500 && res.status !== 429)
      return new ProviderRejectedError(PROVIDER, reason, { status: res.status, code });
    return classifyHttpFailure(PROVIDER, res.status, reason, header(res.headers, 'retry-after'));
  }
  const code =
    typeof e.code === 'string'
      ? e.code
      : e.name === 'AbortError' || e.name === 'TimeoutError'
        ? 'timeout'
        : 'network error';
  return classifyHttpFailure(PROVIDER, undefined, `Google Play API unreachable (${code})`);
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ProviderRejectedError && err.status === 404;
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof ProviderRejectedError && err.status === 409;
}
