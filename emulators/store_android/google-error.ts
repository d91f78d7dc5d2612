import type Koa from 'koa';

/** Canonical gRPC status names Google puts in `error.status`, by HTTP code. */
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** Legacy per-error `reason` Google still sends in `error.errors[]`. */
const REASON: Record<string, string> = {
  INVALID_ARGUMENT: 'badRequest',
  FAILED_PRECONDITION: 'failedPrecondition',
  UNAUTHENTICATED: 'authError',
  PERMISSION_DENIED: 'permissionDenied',
  NOT_FOUND: 'notFound',
  ALREADY_EXISTS: 'alreadyExists',
  INTERNAL: 'backendError',
};

/** A Google API error; rendered as {error:{code,message,errors,status}}. */
export class GoogleError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status: string = STATUS[code] ?? 'UNKNOWN',
    readonly reason: string = REASON[status] ?? 'invalid',
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new GoogleError(400, message);
export const precondition = (message: string) => new GoogleError(400, message, 'FAILED_PRECONDITION');
export const notFound = (message: string) => new GoogleError(404, message);

export function sendGoogleError(ctx: Koa.Context, err: GoogleError): void {
  ctx.status = err.code;
  if (err.code === 401)
    ctx.set('WWW-Authenticate', 'Bearer realm="https://accounts.google.com/", error="invalid_token"');
  ctx.body = {
    error: {
      code: err.code,
      message: err.message,
      errors: [{ message: err.message, domain: 'global', reason: err.reason }],
      status: err.status,
    },
  };
}

export async function readRawBody(ctx: Koa.Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of ctx.req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readJsonBody(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const raw = await readRawBody(ctx);
  if (!raw.trim()) return {};
  try {
    const v = JSON.parse(raw);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* fall through */
  }
  throw invalid('Invalid JSON payload received.');
}
