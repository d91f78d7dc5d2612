import type { Logger } from 'pino';
import { ConfigError } from '../runtime/config';
import { isDatabaseUnavailable } from '../db/unavailable';
import { ConnectionError, type ConnectionErrorCode } from '../db/connections';
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

  /**
   * The refusal as a form shows it, beside its fields: the first problem in its own words. The
   * API's detail names the field before each problem and lists them all, since its caller has no
   * form. Absent when the detail already reads as one sentence.
   */
  formText?: string;

  toBody(): Record<string, unknown> {
    return { error: this.code, ...(this.detail ? { detail: this.detail } : {}), ...this.extra };
  }
}

export const REALM = 'billing-api';

export const invalidApiKey = () =>
  new ApiError(
    401,
    'invalid_api_key',
    'Provide a valid secret key as "Authorization: Bearer sk_…".',
    {},
    {
      'WWW-Authenticate': `Bearer realm="${REALM}"`,
    },
  );

export const insufficientScope = (scope: string) =>
  new ApiError(
    403,
    'insufficient_scope',
    `This key lacks the scope "${scope}". Mint a key that carries it in the dashboard (Settings → Developer API).`,
  );

/** 400 `invalid_request`; `param` names the field at fault, as Stripe's errors do. */
export const invalidRequest = (detail: string, param?: string, formText?: string) =>
  Object.assign(new ApiError(400, 'invalid_request', detail, param ? { param } : {}), formText ? { formText } : {});

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

export const serverMisconfigured = (variable?: string) =>
  new ApiError(
    500,
    'server_misconfigured',
    variable ? `Server-side failure: check ${variable}.` : 'Server-side failure; the request id is in the logs.',
  );

/**
 * A provider connection's refusal (db/connections.ts, db/connection-service.ts, db/app-providers.ts)
 * as the API's status and code. `no_tenant` is absent: it is a bug, answered as one.
 */
const CONNECTION_ERRORS: Record<Exclude<ConnectionErrorCode, 'no_tenant'>, [number, string]> = {
  invalid_request: [400, 'invalid_request'],
  oauth_required: [400, 'invalid_request'],
  app_not_found: [404, 'not_found'],
  not_found: [404, 'not_found'],
  no_connection: [409, 'no_connection'],
  ambiguous_connection: [409, 'ambiguous_connection'],
  inactive: [409, 'connection_inactive'],
  account_already_connected: [409, 'account_already_connected'],
  credential_missing: [409, 'credential_missing'],
  webhook_secret_missing: [409, 'webhook_secret_missing'],
};

/**
 * A connection refusal as the caller sees it; `param` names the input at fault on a 400. Its
 * message never carries a secret (the connection code names fields, never values), and the
 * candidates are what a refusal may show about a connection (no *_enc column).
 */
export function connectionApiError(e: ConnectionError, param?: string): ApiError | undefined {
  if (e.code === 'no_tenant') return undefined;
  const [status, code] = CONNECTION_ERRORS[e.code];
  if (status === 400) return invalidRequest(e.message, param);
  const candidates = e.candidates?.length
    ? `. Candidates: ${e.candidates.map((c) => `${c.account_ref} (id ${c.id}${c.label ? `, "${c.label}"` : ''})`).join('; ')}. Pass one as account_id.`
    : '';
  return new ApiError(status, code, `${e.message}${candidates}`, e.candidates ? { candidates: e.candidates } : {});
}

/** Any thrown value as the error a caller is answered with: the one table from failures to the API's error shape. */
export function toApiError(err: unknown, log?: Logger): ApiError {
  if (err instanceof ApiError) return err;
  const refusal = err instanceof ConnectionError ? connectionApiError(err) : undefined;
  if (refusal) return refusal;
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
    return new ApiError(
      status,
      'invalid_request',
      expose ? String((err as Error).message) : 'The request could not be read.',
    );
  }
  // Postgres down or restarting is not a bug: 503 with Retry-After, so callers (and webhook
  // providers) retry once the pool has reconnected.
  if (isDatabaseUnavailable(err)) {
    log?.warn(
      { err: { message: (err as Error)?.message, code: (err as { code?: string }).code } },
      'database unavailable',
    );
    return new ApiError(
      503,
      'temporarily_unavailable',
      'The database is unavailable; retry shortly.',
      {},
      { 'Retry-After': '5' },
    );
  }
  log?.error({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'unhandled error');
  return new ApiError(
    500,
    'server_misconfigured',
    'Server-side failure; quote the Request-Id header when reporting it.',
  );
}
