import type Koa from 'koa';
import type { EmulatorFactory } from '../common/types';
import { authenticate } from './auth';
import { billingRoutes } from './billing';
import { checkout } from './checkout';
import { RzpError } from './errors';
import { sendEvent } from './events';
import { match, type Route } from './http';
import { itemRoutes } from './items';
import { ensureOAuthClient, oauthRoutes } from './oauth';
import { offerRoutes } from './offers';
import { hostedLinkPage, paymentLinkRoutes } from './payment-links';
import { planRoutes } from './plans';
import { ensureAccount, publicAccount, type Caller } from './state';

/**
 * psp_c: a stateful subset of the Razorpay API (items, plans, payment links, customers,
 * subscriptions, payments, and the emulator's offers stand-in), with Razorpay's Basic auth,
 * `{entity:'collection', count, items}` lists, error envelope and webhook signing, plus the
 * partner OAuth pages. Control routes beyond the host's: POST /__control/accounts and
 * POST /__control/oauth_clients.
 */
export const createEmulator: EmulatorFactory = (store, { publicUrl }) => {
  const who = (ctx: Koa.Context) => ctx.state.caller as Caller;
  const apiRoutes: Route[] = [
    ...itemRoutes(store, who),
    ...planRoutes(store, who),
    ...paymentLinkRoutes(store, who, publicUrl),
    ...offerRoutes(store, who),
    ...billingRoutes(store, who, publicUrl),
  ];
  const openRoutes = oauthRoutes(store);

  const api: Koa.Middleware = async (ctx) => {
    try {
      const hosted = /^\/i\/([A-Za-z0-9]+)$/.exec(ctx.path);
      if (hosted && ctx.method === 'GET') {
        const html = hostedLinkPage(store, hosted[1]);
        if (html) {
          ctx.type = 'text/html';
          ctx.body = html;
          return;
        }
      }
      const open = match(openRoutes, ctx.method, ctx.path);
      if (open) {
        const out = await open.route.handler(ctx, open.params);
        if (out !== undefined) ctx.body = out;
        return;
      }
      if (ctx.path.startsWith('/v1/')) {
        ctx.state.caller = authenticate(store, ctx);
        const hit = match(apiRoutes, ctx.method, ctx.path);
        if (hit) {
          ctx.body = await hit.route.handler(ctx, hit.params);
          return;
        }
      }
      // Razorpay answers unknown URLs with 400, in its usual envelope.
      throw new RzpError(400, 'The requested URL was not found on the server.');
    } catch (err) {
      if (!(err instanceof RzpError)) throw err;
      ctx.status = err.status;
      ctx.body = err.body();
    }
  };

  return {
    provider: 'psp_c',
    api,
    sendEvent: (params) => sendEvent(store, params),
    checkout: (params) => checkout(store, params, publicUrl),
    control: {
      'POST /accounts': (body) =>
        publicAccount(ensureAccount(store, typeof body.account === 'string' ? body.account : undefined)),
      'POST /oauth_clients': (body) => ensureOAuthClient(store, body),
    },
  };
};
