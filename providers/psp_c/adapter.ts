import type { ProviderAdapter, ProviderContext } from '../types';
import { cancelLinks, ensureLink } from './links';
import { isNoSuchId, RazorpayClient, type PspCOptions } from './client';
import { getSubscriptionSnapshot, listSubscriptionPage, planOfSubscription, skuOfPlan } from './subscriptions';
import { listCatalogue, upsertItem, upsertPlans } from './catalogue';
import { exchangeCode } from './oauth';
import { verifyRazorpayWebhook } from './webhook';

/**
 * psp_c, the regional provider, over the Razorpay API with plain fetch: HTTP Basic with
 * the merchant's key_id:key_secret (or a partner OAuth access token as Bearer), JSON
 * bodies, a timeout on every call. Razorpay takes no idempotency key on these endpoints,
 * so writes match existing objects first (items and plans by our notes, payment links by
 * reference_id, offers by code); the idempotency keys the interface passes are not sent.
 */
export function createPspCAdapter(opts: PspCOptions = {}): ProviderAdapter {
  const client = (ctx: ProviderContext) => new RazorpayClient(ctx, opts);
  return {
    provider: 'psp_c',
    authKind: 'key_pair',

    async checkReachable(ctx) {
      await client(ctx).call('GET', '/v1/items', { query: { count: 1 } });
    },

    listRemoteProducts: (ctx) => listCatalogue(client(ctx)),

    upsertProduct: (ctx, spec) => upsertItem(client(ctx), spec),

    upsertPrices: (ctx, _externalProductId, spec) => upsertPlans(client(ctx), spec),

    ensurePaymentLink: (ctx, _externalProductId, spec, appId) => ensureLink(client(ctx), ctx.mode, spec, appId),

    /**
     * Deactivate the item and cancel the product's open payment links. Razorpay plans can
     * be neither edited nor archived, so they stay; with the item inactive and no open link
     * there is nothing left to buy, and existing subscriptions keep running.
     */
    async stopSales(ctx, externalProductId, spec) {
      const c = client(ctx);
      if (externalProductId.startsWith('item_')) {
        try {
          await c.call('PATCH', `/v1/items/${encodeURIComponent(externalProductId)}`, { body: { active: false } });
        } catch (err) {
          if (!isNoSuchId(err)) throw err;
        }
      }
      await cancelLinks(c, spec.product_id);
    },

    listSubscriptions: (ctx, cursor, limit) => listSubscriptionPage(client(ctx), ctx, cursor, limit),
    getSubscription: (ctx, id) => getSubscriptionSnapshot(client(ctx), ctx, id),
    verifyWebhook: async (input) => verifyRazorpayWebhook(input),
    skuOfPrice: (ctx, planId) => skuOfPlan(client(ctx), planId),
    priceOfSubscription: (ctx, id) => planOfSubscription(client(ctx), id),

    /**
     * `extra` (beyond the interface) passes the redirect_uri and mode Razorpay's /token takes when the caller knows
     * them.
     */
    exchangeOAuthCode: (
      baseUrl: string,
      oauthClient: { client_id: string; client_secret: string },
      code: string,
      extra: { redirect_uri?: string; mode?: 'test' | 'live' } = {},
    ) => exchangeCode(baseUrl, oauthClient, code, { ...opts, ...extra }),
  };
}
