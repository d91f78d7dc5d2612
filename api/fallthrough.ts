import type Koa from 'koa';
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { ApiError } from '../operations/errors';
import { verifyKey } from './gate';

/**
 * What `/v1` answers when no route took the request: 401 for a bad key first (so an
 * unauthenticated caller learns nothing about which routes exist), then 405 with `Allow` when
 * the path exists under other methods (TRACE, PROPFIND and friends included), else 404 — all in
 * the Error shape. Mounted around the /v1 router; the check spends no rate-limit token.
 */
export function v1Fallthrough(router: Router, db: Knex): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    if (ctx.path !== '/v1' && !ctx.path.startsWith('/v1/')) return;
    // client endpoints answer their own (api/sdk/mount.ts)
    if (ctx.path === '/v1/sdk' || ctx.path.startsWith('/v1/sdk/')) return;
    await verifyKey(db, ctx.headers, ctx.req.rawHeaders);
    const allowed = new Set<string>();
    for (const layer of router.match(ctx.path, ctx.method).path) for (const m of layer.methods) allowed.add(m);
    if (allowed.size === 0)
      throw new ApiError(404, 'not_found', `No route ${ctx.path}; the operations are listed in /v1/openapi.json.`);
    const allow = [...allowed].sort().join(', ');
    throw new ApiError(
      405,
      'method_not_allowed',
      `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}.`,
      {},
      { Allow: allow },
    );
  };
}
