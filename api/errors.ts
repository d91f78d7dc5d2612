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
