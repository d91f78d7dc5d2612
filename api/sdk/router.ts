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
    const { principal, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders);
    ctx.set(rateHeaders);
    const appUserId = ctx.params.appUserId;
    if (!appUserId || appUserId.length > 200 || appUserId.includes('\u0000')) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    ctx.body = await subscriberView(services.db, principal, appUserId);
  });

  registerStorePurchaseRoute(router, services);

  return router;
}
