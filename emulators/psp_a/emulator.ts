import type Koa from 'koa';
import type { EmulatorFactory } from '../common/types';
import { Accounts, describeAccount } from './accounts';
import { createApiMiddleware } from './api';
import { createCheckout } from './checkout';
import { createEvents } from './events';
import { WEBHOOK_ENDPOINTS, createHostedPages } from './hosted';
import { createOAuthMiddleware } from './oauth';
import { makeRenderers } from './render';
import { Repo } from './repo';
import { couponRoutes } from './resources/coupons';
import { paymentLinkRoutes } from './resources/payment-links';
import { priceRoutes } from './resources/prices';
import { productRoutes } from './resources/products';
import { readonlyRoutes } from './resources/readonly';

/**
 * psp_a: a stateful subset of the Stripe API (products, prices, payment links, coupons,
 * promotion codes, and the objects a checkout leaves), Connect OAuth, and signed webhooks.
 */
/** Run middlewares in order, each deciding whether to call the next (koa-compose without the dependency). */
function chain(middlewares: Koa.Middleware[]): Koa.Middleware {
  return (ctx, next) => {
    const run = (i: number): Promise<void> =>
      i === middlewares.length ? next() : Promise.resolve(middlewares[i](ctx, () => run(i + 1)));
    return run(0);
  };
}

export const createEmulator: EmulatorFactory = (store, { publicUrl }) => {
  const repo = new Repo(store);
  const accounts = new Accounts(repo);
  const renderers = makeRenderers(repo);
  const deps = { repo, accounts, publicUrl };
  const routes = [
    ...productRoutes(deps, renderers),
    ...priceRoutes(deps, renderers),
    ...paymentLinkRoutes(deps, renderers),
    ...couponRoutes(deps, renderers),
    ...readonlyRoutes(deps, renderers),
  ];
  const events = createEvents({ repo, accounts, renderers });
  const checkout = createCheckout({ repo, renderers, events });
  return {
    provider: 'psp_a',
    api: chain([
      createApiMiddleware({ accounts, routes }),
      createOAuthMiddleware({ repo, accounts }),
      createHostedPages({ repo, checkout }),
      async (ctx) => {
        ctx.status = 404;
        ctx.type = 'application/json';
        ctx.body = JSON.stringify(
          {
            error: { type: 'invalid_request_error', message: `Unrecognized request URL (${ctx.method}: ${ctx.path}).` },
          },
          null,
          2,
        );
      },
    ]),
    sendEvent: (params) => events.sendEvent(params),
    checkout,
    control: {
      // Where hosted-page purchases deliver their webhooks (Stripe: the dashboard's webhook endpoint).
      'POST /webhook_endpoints': (body) => {
        if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url))
          throw Object.assign(new Error('url (http or https) is required'), { status: 400 });
        const endpoint = {
          id: `we_${Date.now().toString(36)}`,
          url: body.url,
          ...(typeof body.account === 'string' && body.account ? { account: body.account } : {}),
        };
        repo.store.insert(WEBHOOK_ENDPOINTS, endpoint);
        return endpoint;
      },
      'POST /accounts': (body) =>
        describeAccount(accounts.ensure(typeof body.account === 'string' && body.account ? body.account : undefined)),
      // A Connect platform (OAuth client): `client_id` ca_… and `client_secret` sk_test_/sk_live_…, both optional.
      'POST /oauth_clients': (body) => {
        const secret = typeof body.client_secret === 'string' && body.client_secret ? body.client_secret : undefined;
        const platform = accounts.ensurePlatform(
          typeof body.client_id === 'string' && body.client_id ? body.client_id : undefined,
          secret,
        );
        return { ...describeAccount(platform), client_secret: secret ?? platform._credentials.test.secret_key };
      },
    },
  };
};
