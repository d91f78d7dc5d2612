import type Koa from 'koa';
import Router from '@koa/router';
import { ApiError } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { identifyPublishable } from './auth';
import { sdkCors } from './cors';
import { sdkRouter } from './router';
import { sdkCheckoutRouter } from './routes';

/**
 * The client endpoints (/v1/sdk/*, publishable keys), mounted the same on both hosts that serve
 * /v1. What no route takes under /v1/sdk is answered here rather than by the management API's
 * fallthrough (which speaks of secret keys): the publishable key first (401, spending nothing),
 * then 405 with `Allow` or 404, in the Error shape.
 */
export function mountSdk(app: Koa, services: Services): void {
  const routers: Router[] = [sdkCheckoutRouter(services), sdkRouter(services)];
  app.use(sdkCors());
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    if (ctx.path !== '/v1/sdk' && !ctx.path.startsWith('/v1/sdk/')) return;
    await identifyPublishable(services.db, ctx.req.rawHeaders);
    const allowed = new Set<string>();
    for (const r of routers)
      for (const layer of r.match(ctx.path, ctx.method).path) for (const m of layer.methods) allowed.add(m);
    if (allowed.size === 0) throw new ApiError(404, 'not_found', `No client endpoint ${ctx.path}.`);
    const allow = [...allowed].sort().join(', ');
    throw new ApiError(
      405,
      'method_not_allowed',
      `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}.`,
      {},
      { Allow: allow },
    );
  });
  for (const r of routers) app.use(r.routes());
}
