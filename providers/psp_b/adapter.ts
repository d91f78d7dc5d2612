import { ProviderRejectedError } from '../errors';
import type { PaymentLinkResult, ProductSpec, ProviderAdapter, ProviderContext, RemoteProduct } from '../types';
import {
  priceFields,
  priceNeedsUpdate,
  pricedLocales,
  productBody,
  productNeedsUpdate,
  type PaddlePrice,
  type PaddleProduct,
} from './catalog';
import { PROVIDER, paddleListAll, paddleRequest, type HttpOptions } from './http';
import { getSubscriptionSnapshot, listSubscriptionPage } from './subscriptions';
import { exchangePaddleOAuthCode } from './oauth';
import { verifyAndParse } from './webhook';

export interface PspBAdapterOptions extends HttpOptions {
  /** Webhook timestamp tolerance in seconds (default: Paddle's own 5 s). */
  webhookToleranceSec?: number;
}

/**
 * psp_b speaks the Paddle Billing API (v1) with plain fetch.
 *
 * Idempotency: Paddle has no idempotency-key header, so every write first looks the object up
 * by what we stored in its custom_data (product_id / sku / tenant_id) or by discount code,
 * and updates it instead of creating a second one. A retried call after a lost response
 * therefore finds the object the first attempt made. The idempotency keys the interface
 * passes are unused for that reason.
 */
export function createPspBAdapter(opts: PspBAdapterOptions = {}): ProviderAdapter {
  const http: HttpOptions = { fetch: opts.fetch, timeoutMs: opts.timeoutMs };
  const list = <T>(ctx: ProviderContext, path: string, query: Record<string, string>) =>
    paddleListAll<T>(ctx, path, { per_page: '200', ...query }, http);
  const call = <T>(ctx: ProviderContext, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) =>
    paddleRequest<T>(ctx, method, path, { ...http, body }).then((r) => r.data);

  const ourProduct = (p: PaddleProduct, spec: ProductSpec) => {
    const cd = p.custom_data ?? {};
    return (
      cd.product_id === spec.product_id ||
      (cd.product_id == null && cd.sku === spec.sku && cd.tenant_id === spec.tenant_id)
    );
  };

  const productPrices = (ctx: ProviderContext, productId: string, spec: ProductSpec) =>
    list<PaddlePrice>(ctx, '/prices', { product_id: productId, status: 'active' }).then((all) =>
      all.filter((p) => (p.custom_data ?? {}).product_id === spec.product_id),
    );

  return {
    provider: PROVIDER,
    authKind: 'key_pair',

    async checkReachable(ctx) {
      await paddleRequest(ctx, 'GET', '/products', { ...http, query: { per_page: '1' } });
    },

    async listRemoteProducts(ctx): Promise<RemoteProduct[]> {
      // Paddle lists only active products unless asked; drift needs the archived ones too.
      const products = await list<PaddleProduct>(ctx, '/products', { status: 'active,archived' });
      return products.map((p) => {
        const cd = p.custom_data ?? {};
        return {
          external_id: p.id,
          sku: typeof cd.sku === 'string' ? cd.sku : null,
          name: p.name,
          active: p.status === 'active',
          product_id: typeof cd.product_id === 'string' ? cd.product_id : null,
        };
      });
    },

    async upsertProduct(ctx, spec) {
      const existing = (await list<PaddleProduct>(ctx, '/products', { status: 'active,archived' })).find((p) =>
        ourProduct(p, spec),
      );
      if (!existing) {
        const created = await call<PaddleProduct>(ctx, 'POST', '/products', productBody(spec));
        return { external_id: created.id };
      }
      // Status is left alone: an archived product was retired on purpose (stopSales).
      if (productNeedsUpdate(existing, spec))
        await call(ctx, 'PATCH', `/products/${encodeURIComponent(existing.id)}`, productBody(spec));
      return { external_id: existing.id };
    },

    async upsertPrices(ctx, externalProductId, spec) {
      // One Paddle price per product: base unit_price plus per-country overrides.
      const ours = await productPrices(ctx, externalProductId, spec);
      if (spec.prices.length === 0) return { priced_locales: 0, price_ids: ours.map((p) => p.id) };
      const fields = priceFields(spec);
      const [keep, ...extra] = ours;
      let priceId: string;
      if (keep) {
        if (priceNeedsUpdate(keep, fields)) await call(ctx, 'PATCH', `/prices/${encodeURIComponent(keep.id)}`, fields);
        priceId = keep.id;
      } else {
        const created = await call<PaddlePrice>(ctx, 'POST', '/prices', { ...fields, product_id: externalProductId });
        priceId = created.id;
      }
      // Leftovers (e.g. from a run that crashed between create and record) would be sold side by side: archive them.
      for (const p of extra) await call(ctx, 'PATCH', `/prices/${encodeURIComponent(p.id)}`, { status: 'archived' });
      return { priced_locales: pricedLocales(spec), price_ids: [priceId] };
    },

    /**
     * Paddle has no payment links. A checkout is opened with Paddle.js (or Paddle's hosted
     * checkout) from price ids; the other route, POST /transactions with checkout.url, makes
     * one draft transaction for one purchase that cannot be shared between customers and
     * lapses. So the app's entry point is the price itself, as a plan; the client opens the
     * checkout with it (and passes sku/app_user_id/email as customData). The same price
     * serves every app of the tenant, so appId does not change the answer.
     */
    async ensurePaymentLink(ctx, externalProductId, spec): Promise<PaymentLinkResult> {
      const [price] = await productPrices(ctx, externalProductId, spec);
      if (!price) {
        throw new ProviderRejectedError(
          PROVIDER,
          `product ${externalProductId} has no active price yet; sync prices first`,
          { code: 'price_missing' },
        );
      }
      return { kind: 'plan', external_id: price.id };
    },

    async stopSales(ctx, externalProductId) {
      const id = encodeURIComponent(externalProductId);
      let product: PaddleProduct;
      try {
        product = await call<PaddleProduct>(ctx, 'GET', `/products/${id}`);
      } catch (err) {
        if (err instanceof ProviderRejectedError && err.status === 404) return; // nothing left to sell
        throw err;
      }
      // Prices first, so a half-done retirement never leaves a sellable price on an archived product.
      const prices = await list<PaddlePrice>(ctx, '/prices', { product_id: product.id, status: 'active' });
      for (const p of prices) await call(ctx, 'PATCH', `/prices/${encodeURIComponent(p.id)}`, { status: 'archived' });
      if (product.status !== 'archived') await call(ctx, 'PATCH', `/products/${id}`, { status: 'archived' });
    },

    listSubscriptions: (ctx, cursor, limit) => listSubscriptionPage(ctx, cursor, limit, http),
    getSubscription: (ctx, id) => getSubscriptionSnapshot(ctx, id, http),

    async verifyWebhook(input) {
      return verifyAndParse(input, opts.webhookToleranceSec);
    },

    exchangeOAuthCode(baseUrl, client, code) {
      return exchangePaddleOAuthCode(baseUrl, client, code, http);
    },
  };
}
