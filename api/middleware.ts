import crypto from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { toApiError } from '../operations/errors';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    log: Logger;
    tenantId?: string;
    keyId?: string;
  }
}

// Request ids come from a pool of random bytes filled 4 KiB at a time: one call into the CSPRNG
// per 341 requests instead of one per request (it showed in the api's CPU profile).
const ID_BYTES = 12;
const idPool = Buffer.alloc(ID_BYTES * 341);
let idOffset = idPool.length;

export function newRequestId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    crypto.randomFillSync(idPool);
    idOffset = 0;
  }
  idOffset += ID_BYTES;
  return `req_${idPool.toString('base64url', idOffset - ID_BYTES, idOffset)}`;
}

/** Paths answered outside the routers, logged whole: they carry no ids. */
const FIXED_PATHS = /^\/(healthz|readyz|assets\/[a-z]+\.(css|js))?$/;

/**
 * What the request log names: the route's template (`/v1/sdk/subscribers/:appUserId`), never
 * the path itself, whose ids are often personal data (an app user id is often an email). A path
 * no route took is `(unmatched)`: its text is whatever the client sent.
 */
export function routeOf(ctx: Koa.Context): string {
  // @koa/router's template of the route that ran (its prefixes included).
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (FIXED_PATHS.test(ctx.path)) return ctx.path;
  if (/^\/api\/webhooks\/[^/]+$/.test(ctx.path)) return '/api/webhooks/:provider';
  return '(unmatched)';
}

/** Every response carries `Request-Id`; the same id is on every log line of the request. */
export function requestContext(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ request_id: requestId });
    ctx.set('Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info(
        {
          method: ctx.method,
          route: routeOf(ctx),
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
          tenant_id: ctx.state.tenantId,
          key_id: ctx.state.keyId,
        },
        'request',
      );
    }
  };
}

/** Render ApiError as the Error shape; anything unexpected is a 500 without internals. */
export function errorHandler(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: 'not_found', detail: `no route ${ctx.method} ${ctx.path}` };
      } else if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = { error: 'method_not_allowed', detail: `${ctx.method} is not allowed on ${ctx.path}` };
      }
    } catch (err) {
      const e = toApiError(err, ctx.state.log);
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      ctx.body = e.toBody();
    }
  };
}
