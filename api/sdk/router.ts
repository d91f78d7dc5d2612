import type Router from '@koa/router';
import { exactRouter } from '../router';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { admitPublishable } from './auth';
import { subscriberView } from './subscriber';
import { registerStorePurchaseRoute } from './store-purchases';
import { parseWait, waitForPremium } from './subscriber-wait';

/** `/v1/sdk/*`: what client apps call with a publishable key. */
export function sdkRouter(services: Services): Router {
  const router = exactRouter({ prefix: '/v1/sdk' });

  router.get('/subscribers/:appUserId', async (ctx) => {
    const appUserId = ctx.params.appUserId;
    const valid = !!appUserId && appUserId.length <= 200 && !appUserId.includes('\u0000');
    // The key and the limits come first (401, 429); an invalid id spends no per-user bucket.
    // A read of stored state: an empty tenant bucket alone does not refuse it (api/sdk/auth.ts).
    const { actor, rateHeaders, overTenantLimit } = await admitPublishable(services.db, ctx.req.rawHeaders, {
      address: ctx.ip,
      appUserId: valid ? appUserId : undefined,
      readOnly: true,
    });
    ctx.state.tenantId = actor.tenantId;
    ctx.set(rateHeaders);
    if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
    // ?wait_for=premium: a bounded long-poll (api/sdk/subscriber-wait.ts); it spent the same tokens as a read.
    // Over the tenant's limit it holds nothing: the stored state is the answer, now.
    const wait = parseWait(ctx.query);
    if (!wait || overTenantLimit) {
      ctx.body = await subscriberView(services.db, actor, appUserId);
      return;
    }
    const gone = new AbortController();
    const onClose = () => !ctx.res.writableFinished && gone.abort();
    ctx.res.once('close', onClose);
    try {
      const view = await waitForPremium(services, actor, appUserId, ctx.ip, wait.timeoutMs, gone.signal);
      if (view) ctx.body = view;
      else ctx.status = 499; // the client went away (nginx's "client closed request"); nothing is sent
    } finally {
      ctx.res.off('close', onClose);
    }
  });

  registerStorePurchaseRoute(router, services);

  return router;
}
