import type { Logger } from 'pino';
import { ConfigError } from '../runtime/config';
import { isDatabaseUnavailable } from '../db/unavailable';
/** Errors carry the spec's stable `error` code; the HTTP layer and the tool server both render them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'ApiError';
  }

  toBody(): Record<string, unknown> {
    return { error: this.code, ...(this.detail ? { detail: this.detail } : {}), ...this.extra };
  }
}

export const REALM = 'billing-api';

export const invalidApiKey = () =>
  new ApiError(401, 'invalid_api_key', 'Provide a valid secret key as "Authorization: Bearer sk_…".', {}, {
    'WWW-Authenticate': `Bearer realm="${REALM}"`,
  });

export const insufficientScope = (scope: string) =>
  new ApiError(403, 'insufficient_scope', `This key lacks the scope "${scope}". Mint a key that carries it in the dashboard (Settings → Developer API).`);

/** 400 `invalid_request`; `param` names the field at fault, as Stripe's errors do. */
export const invalidRequest = (detail: string, param?: string) => new ApiError(400, 'invalid_request', detail, param ? { param } : {});

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

export const serverMisconfigured = (variable?: string) =>
  new ApiError(500, 'server_misconfigured', variable ? `Server-side failure: check ${variable}.` : 'Server-side failure; the request id is in the logs.');

/** Any thrown value as the error a caller is answered with: the one table from failures to the API's error shape. */
export function toApiError(err: unknown, log?: Logger): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ConfigError) {
    log?.error({ variable: err.variable }, 'configuration error');
    return new ApiError(500, 'server_misconfigured', `Server-side failure: ${err.variable} is misconfigured.`);
  }
  const status = (err as { status?: number; expose?: boolean }).status;
  if (status === 413) return new ApiError(413, 'payload_too_large', 'Request body exceeds the size limit.');
  // A client mistake caught by Koa or a library below it (bad encoding, aborted body…) is the
  // client's 4xx, never the server's `server_misconfigured`.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const expose = (err as { expose?: boolean }).expose;
    return new ApiError(status, 'invalid_request', expose ? String((err as Error).message) : 'The request could not be read.');
  }
  // Postgres down or restarting is not a bug: 503 with Retry-After, so callers (and webhook
  // providers) retry once the pool has reconnected.
  if (isDatabaseUnavailable(err)) {
    log?.warn({ err: { message: (err as Error)?.message, code: (err as { code?: string }).code } }, 'database unavailable');
    return new ApiError(503, 'temporarily_unavailable', 'The database is unavailable; retry shortly.', {}, { 'Retry-After': '5' });
  }
  log?.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'unhandled error');
  return new ApiError(500, 'server_misconfigured', 'Server-side failure; quote the Request-Id header when reporting it.');
}
