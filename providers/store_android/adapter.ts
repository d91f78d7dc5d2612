import type { ProviderAdapter, ProviderContext, StorePurchase } from '../types';
import { call, playClient } from './client';
import { ensureOffer } from './offers';
import { ensurePlan, stopSales } from './plans';
import { checkReachable, listRemoteProducts, upsertPrices, upsertProduct } from './products';
import { toStorePurchase } from './purchase';
import { verifyPush, type PushVerifyOptions } from './webhook';

export interface StoreAndroidAdapterOptions extends PushVerifyOptions {
  /** BCP-47 language of the listing we write; Play requires one in the app's default language. */
  listingLanguage?: string;
}

/**
 * Google Play Developer API v3 through @googleapis/androidpublisher, authenticated as the
 * tenant's service account (JWT-bearer grant at the credential's token_uri); RTDN arrives as
 * Pub/Sub push authenticated by Google's OIDC token. See README.md beside this file.
 */
export function createStoreAndroidAdapter(opts: StoreAndroidAdapterOptions = {}): ProviderAdapter {
  const language = opts.listingLanguage ?? 'en-US';
  return {
    provider: 'store_android',
    authKind: 'store',
    checkReachable,
    listRemoteProducts: (ctx) => listRemoteProducts(ctx, language),
    // Play has no idempotency header: every write below is find-then-create, keyed by Play ids.
    upsertProduct: (ctx, spec) => upsertProduct(ctx, spec, language),
    upsertPrices: (ctx, externalProductId, spec) => upsertPrices(ctx, externalProductId, spec),
    ensurePaymentLink: (ctx, externalProductId, spec) => ensurePlan(ctx, externalProductId, spec),
    ensureCouponCounterpart: (ctx, coupon) => ensureOffer(ctx, coupon),
    stopSales: (ctx, externalProductId) => stopSales(ctx, externalProductId),
    verifyWebhook: (input) => verifyPush(input, opts),
    async fetchStorePurchase(ctx: ProviderContext, purchaseId: string, storeProductId?: string): Promise<StorePurchase> {
      const play = playClient(ctx);
      const p = await call(ctx, () => play.purchases.subscriptionsv2.get({ packageName: ctx.accountRef, token: purchaseId }));
      return toStorePurchase(purchaseId, p, storeProductId);
    },
    async acknowledgeStorePurchase(ctx: ProviderContext, purchaseId: string, storeProductId: string): Promise<void> {
      const play = playClient(ctx);
      // purchases.subscriptions.acknowledge takes the Play productId (the subscription), not the base plan.
      await call(ctx, () => play.purchases.subscriptions.acknowledge({ packageName: ctx.accountRef, subscriptionId: storeProductId, token: purchaseId, requestBody: {} }));
    },
  };
}
