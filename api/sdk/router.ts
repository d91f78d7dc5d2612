import type Router from '@koa/router';
import type Koa from 'koa';
import { exactRouter } from '../router';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { admitPublishable, type AppActor } from './auth';
import { entitlementTokenRead } from './token';
import { subscriberRead } from './subscriber';
import { registerStorePurchaseRoute } from './store-purchases';
import { registerSdkIdentify } from './identify';
import { parseWait, waitForPremium, type HeldRead } from './subscriber-wait';

/** `/v1/sdk/*`: what client apps call with a publishable key. */
export function sdkRouter(services: Services): Router {
  const router = exactRouter({ prefix: '/v1/sdk' });

  /**
   * The premium check and its signed form share everything: the key and the limits first (401,
   * 429; an invalid id spends no per-user bucket), a read of stored state (an empty tenant
   * bucket alone does not refuse it: api/sdk/auth.ts), and `?wait_for=premium`, a bounded
   * long-poll (api/sdk/subscriber-wait.ts) that spent the same tokens as a read. Over the
   * tenant's limit it holds nothing: the stored state is the answer, now.
   */
  const premiumRead =
    <T>(
      // `held`: the read of a held check, which answers the customer's ids too (api/sdk/subscriber-wait.ts).
      read: (actor: AppActor, appUserId: string, held: boolean) => Promise<HeldRead<T>>,
    ): Koa.Middleware<Koa.DefaultState, Koa.DefaultContext & { params: Record<string, string> }> =>
    async (ctx) => {
      const appUserId = ctx.params.appUserId;
      const valid = !!appUserId && appUserId.length <= 200 && !appUserId.includes('\u0000');
      const { actor, rateHeaders, overTenantLimit } = await admitPublishable(services.db, ctx.req.rawHeaders, {
        address: ctx.ip,
        appUserId: valid ? appUserId : undefined,
        readOnly: true,
      });
      ctx.state.tenantId = actor.tenantId;
      ctx.set(rateHeaders);
      if (!valid) throw invalidRequest('app_user_id must be 1–200 characters', 'app_user_id');
      const wait = parseWait(ctx.query);
      if (!wait || overTenantLimit) {
        ctx.body = (await read(actor, appUserId, false)).answer;
        return;
      }
      const gone = new AbortController();
      const onClose = () => !ctx.res.writableFinished && gone.abort();
      ctx.res.once('close', onClose);
      try {
        const found = await waitForPremium(services, actor, appUserId, ctx.ip, wait.timeoutMs, gone.signal, () =>
          read(actor, appUserId, true),
        );
        if (found) ctx.body = found;
        else ctx.status = 499; // the client went away (nginx's "client closed request"); nothing is sent
      } finally {
        ctx.res.off('close', onClose);
      }
    };

  router.get(
    '/subscribers/:appUserId',
    premiumRead(async (actor, appUserId, held) => {
      const { view, customerIds } = await subscriberRead(services.db, actor, appUserId, { held });
      return { answer: view, premium: view.is_premium, customerIds };
    }),
  );
  // The same answer, signed (docs/entitlement-tokens.md).
  router.get(
    '/subscribers/:appUserId/token',
    premiumRead((actor, appUserId, held) => entitlementTokenRead(services, services.db, actor, appUserId, held)),
  );

  registerStorePurchaseRoute(router, services);
  registerSdkIdentify(router, services);

  return router;
}
