import crypto from 'node:crypto';
import type Koa from 'koa';

export interface FieldError {
  field: string;
  message: string;
}

/** A Paddle API error; `code` names the page under developer.paddle.com/errors. */
export class PaddleError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
  }
}

const ERROR_GROUP: Record<string, string> = {
  discount_code_conflict: 'discounts',
};

export const invalidField = (errors: FieldError[]) =>
  new PaddleError(400, 'invalid_field', 'Request does not pass validation.', errors);
export const notFound = (id: string) => new PaddleError(404, 'not_found', `Entity ${id} not found`);
export const badRequest = (detail = 'Invalid request.') => new PaddleError(400, 'bad_request', detail);

export function sendError(ctx: Koa.Context, err: PaddleError): void {
  ctx.status = err.status;
  ctx.body = {
    error: {
      type: 'request_error',
      code: err.code,
      detail: err.detail,
      documentation_url: `https://developer.paddle.com/errors/${ERROR_GROUP[err.code] ?? 'shared'}/${err.code}`,
      ...(err.errors ? { errors: err.errors } : {}),
    },
    meta: { request_id: crypto.randomUUID() },
  };
}

/** The wire view of a stored object: our bookkeeping fields (`_account`, `_mode`) stay in the emulator. */
export function publicView(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!k.startsWith('_')) out[k] = v;
  return out;
}

export function sendEntity(ctx: Koa.Context, obj: Record<string, unknown>, status = 200): void {
  ctx.status = status;
  ctx.body = { data: publicView(obj), meta: { request_id: crypto.randomUUID() } };
}

/**
 * One page of a list endpoint in Paddle's cursor pagination: `after` is the id of the last
 * entity of the previous page, `next` repeats the request's query with the new cursor and is
 * always present (even when has_more is false), per_page is clamped to the endpoint maximum.
 */
export function sendList(
  ctx: Koa.Context,
  baseUrl: string,
  items: Record<string, unknown>[],
  limits: { perPage: number; max: number } = { perPage: 50, max: 200 },
): void {
  const q = ctx.URL.searchParams;
  const requested = q.get('per_page');
  let perPage = limits.perPage;
  if (requested !== null) {
    const n = Number(requested);
    if (!Number.isInteger(n) || n < 1)
      throw invalidField([{ field: 'per_page', message: 'must be a positive integer' }]);
    perPage = Math.min(n, limits.max);
  }
  const order = q.get('order_by') ?? 'id[ASC]';
  const m = /^id\[(ASC|DESC)\]$/.exec(order);
  if (!m) throw invalidField([{ field: 'order_by', message: 'only id[ASC] and id[DESC] are supported here' }]);
  const desc = m[1] === 'DESC';
  const sorted = [...items].sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1) * (desc ? -1 : 1));
  const after = q.get('after');
  const rest = after ? sorted.filter((o) => (desc ? String(o.id) < after : String(o.id) > after)) : sorted;
  const page = rest.slice(0, perPage);
  const nextQuery = new URLSearchParams(q);
  const last = page.at(-1)?.id ?? after;
  if (last) nextQuery.set('after', String(last));
  ctx.body = {
    data: page.map(publicView),
    meta: {
      request_id: crypto.randomUUID(),
      pagination: {
        per_page: perPage,
        next: `${baseUrl}${ctx.path}?${nextQuery.toString()}`,
        has_more: rest.length > page.length,
        estimated_total: sorted.length,
      },
    },
  };
}

/** Comma-separated list query parameter (Paddle's array filters), or null when absent. */
export function listParam(ctx: Koa.Context, name: string): string[] | null {
  const raw = ctx.URL.searchParams.get(name);
  if (raw === null) return null;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
