import Router from '@koa/router';
import { invalidRequest } from '../errors';
import type { Services } from '../services';
import { admitPublishable } from './auth';
import { subscriberView } from './subscriber';
import { registerStorePurchaseRoute } from './store-purchases';

/** `/v1/sdk/*`: what client apps call with a publishable key. */
export function sdkRouter(services: Services): Router {
  const router = new Router({ prefix: '/v1/sdk' });

  router.get('/subscribers/:appUserId', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = !!appUserId && appUserId.length <= 200 && !appUserId.includes('\u0000');
    // The key and the limits come first (401, 429); an invalid id spends no per-user bucket.
    const { principal, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders, { address: ctx.ip, appUserId: valid ? appUserId : undefined });
    ctx.state.tenantId = principal.tenantId;
    ctx.set(rateHeaders);
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    ctx.body = await subscriberView(services.db, principal, appUserId);
  });

  registerStorePurchaseRoute(router, services);

  return router;
}
