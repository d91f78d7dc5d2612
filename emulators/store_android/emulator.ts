import type Koa from 'koa';
import type { EmulatorFactory, EmulatorModule } from '../common/types';
import { accounts } from './accounts';
import { catalog } from './catalog';
import { GoogleError, notFound, readJsonBody, sendGoogleError } from './google-error';
import { emulatorKeys } from './keys';
import { oauth, type Caller } from './oauth';
import { purchases } from './purchases';
import { rtdn } from './rtdn';

type Handler = (ctx: Koa.Context, caller: Caller, params: string[]) => Promise<unknown> | unknown;

const APP = '^/androidpublisher/v3/applications/([^/:]+)';
const SEG = '([^/:]+)';

/**
 * Google Play Developer API v3 (the subset our adapter uses, at Play's real paths and shapes),
 * Google's OAuth token endpoint for service accounts, and RTDN delivery as Pub/Sub push.
 */
export const createEmulator: EmulatorFactory = (store, { publicUrl }) => {
  const accts = accounts(store, publicUrl);
  const keys = emulatorKeys(store);
  const auth = oauth(accts, keys, publicUrl);
  const cat = catalog(store);
  const buys = purchases(store, accts, cat);
  const events = rtdn(store, accts, keys, buys);

  const body = async (ctx: Koa.Context) => readJsonBody(ctx);
  const routes: [string, RegExp, Handler][] = [
    ['GET', new RegExp(`${APP}/subscriptions$`), (ctx, c) => cat.list(c, ctx.query)],
    ['POST', new RegExp(`${APP}/subscriptions$`), async (ctx, c) => cat.create(c, ctx.query, await body(ctx))],
    ['GET', new RegExp(`${APP}/subscriptions/${SEG}$`), (_ctx, c, [, p]) => cat.get(c, p)],
    [
      'PATCH',
      new RegExp(`${APP}/subscriptions/${SEG}$`),
      async (ctx, c, [, p]) => cat.patch(c, p, ctx.query, await body(ctx)),
    ],
    ['DELETE', new RegExp(`${APP}/subscriptions/${SEG}$`), (_ctx, c, [, p]) => cat.remove(c, p)],
    [
      'POST',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}:activate$`),
      (_ctx, c, [, p, b]) => cat.activatePlan(c, p, b),
    ],
    [
      'POST',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}:deactivate$`),
      (_ctx, c, [, p, b]) => cat.deactivatePlan(c, p, b),
    ],
    [
      'GET',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}/offers$`),
      (ctx, c, [, p, b]) => cat.listOffers(c, p, b, ctx.query),
    ],
    [
      'POST',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}/offers$`),
      async (ctx, c, [, p, b]) => cat.createOffer(c, p, b, ctx.query, await body(ctx)),
    ],
    [
      'GET',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}/offers/${SEG}$`),
      (_ctx, c, [, p, b, o]) => cat.getOffer(c, p, b, o),
    ],
    [
      'POST',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}/offers/${SEG}:activate$`),
      (_ctx, c, [, p, b, o]) => cat.activateOffer(c, p, b, o),
    ],
    [
      'POST',
      new RegExp(`${APP}/subscriptions/${SEG}/basePlans/${SEG}/offers/${SEG}:deactivate$`),
      (_ctx, c, [, p, b, o]) => cat.deactivateOffer(c, p, b, o),
    ],
    ['GET', new RegExp(`${APP}/purchases/subscriptionsv2/tokens/${SEG}$`), (_ctx, c, [, t]) => buys.get(c, t)],
    [
      'POST',
      new RegExp(`${APP}/purchases/subscriptions/${SEG}/tokens/${SEG}:acknowledge$`),
      (_ctx, c, [, s, t]) => buys.acknowledge(c, s, t),
    ],
    ['GET', new RegExp(`${APP}/purchases/voidedpurchases$`), (ctx, c) => buys.listVoided(c, ctx.query)],
  ];

  const api: Koa.Middleware = async (ctx) => {
    try {
      if (ctx.method === 'POST' && ctx.path === '/token') return await auth.token(ctx);
      if (ctx.method === 'GET' && ctx.path === '/oauth2/v3/certs') return auth.certs(ctx);
      let pathMatched = false;
      for (const [method, re, handler] of routes) {
        const m = ctx.path.match(re);
        if (!m) continue;
        pathMatched = true;
        if (method !== ctx.method) continue;
        const params = m.slice(1).map((s) => decodeURIComponent(s));
        const caller = auth.authenticate(ctx);
        if (params[0] !== caller.account.account) {
          // A service account reaches only the app it was granted.
          if (accts.find(params[0]))
            throw new GoogleError(403, 'The caller does not have permission', 'PERMISSION_DENIED');
          throw notFound(`Package not found: ${params[0]}.`);
        }
        ctx.status = 200;
        ctx.body = (await handler(ctx, caller, params)) ?? {};
        return;
      }
      throw pathMatched
        ? new GoogleError(405, 'Method not allowed.', 'INVALID_ARGUMENT', 'methodNotAllowed')
        : notFound(`The requested URL ${ctx.path} was not found on this server.`);
    } catch (err) {
      if (err instanceof GoogleError) return sendGoogleError(ctx, err);
      sendGoogleError(ctx, new GoogleError(500, 'Internal error encountered.'));
    }
  };

  const module: EmulatorModule = {
    provider: 'store_android',
    api,
    sendEvent: (params) => events.sendEvent(params),
    /** A license tester's purchase: testPurchase set, ACTIVE, obfuscatedExternalAccountId = app_user_id. */
    async sandboxPurchase(params) {
      const row = buys.create({ ...params, test: true });
      return {
        purchase_token: row.token,
        product_id: row.productId,
        base_plan_id: row.basePlanId,
        account: row.account,
      };
    },
    control: {
      'POST /accounts': (b) => accts.create(b),
      /**
       * `{purchase_token, account?}`: Play voids the purchase and no RTDN is sent (the Voided Purchases API still lists
       * it).
       */
      'POST /void': (b) => {
        const row = buys.voidWithoutNotification(accts.resolve(b.account).account, String(b.purchase_token ?? ''));
        return { purchase_token: row.token, voided_time_millis: row.voidedTimeMillis };
      },
      /** Any purchase (live unless test: true), optionally in a given subscriptionState, for lifecycle tests. */
      'POST /purchases': (b) => {
        const row = buys.create({ ...b, test: b.test === true });
        return {
          purchase_token: row.token,
          product_id: row.productId,
          base_plan_id: row.basePlanId,
          account: row.account,
          state: row.state,
        };
      },
    },
  };
  return module;
};
