import type Router from '@koa/router';
import { exactRouter } from '../router';
import type { Services } from '../../operations/services';
import { checkoutLink } from './checkout-link';
import { publishedPaywall } from './paywall';
import { admitPublishable } from './auth';

/** The client endpoints this branch adds under /v1/sdk (publishable keys only). */
export function sdkCheckoutRouter(services: Services): Router {
  const r = exactRouter({ prefix: '/v1/sdk' });
  r.get('/checkout', async (ctx) => {
    const { actor: who, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders, {
      address: ctx.ip,
    });
    ctx.state.tenantId = who.tenantId;
    ctx.set(rateHeaders);
    ctx.body = await checkoutLink(services.db, who, ctx.query);
  });
  r.get('/paywall', async (ctx) => {
    const { actor: who, rateHeaders } = await admitPublishable(services.db, ctx.req.rawHeaders, {
      address: ctx.ip,
    });
    ctx.state.tenantId = who.tenantId;
    ctx.set(rateHeaders);
    ctx.body = await publishedPaywall(services.db, who);
  });
  return r;
}
