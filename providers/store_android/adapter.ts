import type { ProviderAdapter, ProviderContext, StorePurchase } from '../types';
import { call, playClient } from './client';
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
    stopSales: (ctx, externalProductId) => stopSales(ctx, externalProductId),
    verifyWebhook: (input) => verifyPush(input, opts),
    async fetchStorePurchase(
      ctx: ProviderContext,
      purchaseId: string,
      storeProductId?: string,
    ): Promise<StorePurchase> {
      const play = playClient(ctx);
      const p = await call(ctx, () =>
        play.purchases.subscriptionsv2.get({ packageName: ctx.accountRef, token: purchaseId }),
      );
      return toStorePurchase(purchaseId, p, storeProductId);
    },
    async acknowledgeStorePurchase(ctx: ProviderContext, purchaseId: string, storeProductId: string): Promise<void> {
      const play = playClient(ctx);
      // purchases.subscriptions.acknowledge takes the Play productId (the subscription), not the base plan.
      await call(ctx, () =>
        play.purchases.subscriptions.acknowledge({
          packageName: ctx.accountRef,
          subscriptionId: storeProductId,
          token: purchaseId,
          requestBody: {},
        }),
      );
    },
    /**
     * purchases.voidedpurchases.list (type 1: subscriptions too), following page tokens up to
     * `max`. Voids whose RTDN was lost still revoke: the sweep re-reads each one with the
     * "refunded" hint (Play itself keeps no revoked state).
     */
    async listVoidedPurchases(ctx: ProviderContext, sinceMs: number, max: number) {
      const play = playClient(ctx);
      const out: { purchase_id: string; voided_at_ms: number }[] = [];
      let token: string | undefined;
      do {
        const page = await call(ctx, () =>
          play.purchases.voidedpurchases.list({
            packageName: ctx.accountRef,
            startTime: String(sinceMs),
            type: 1,
            maxResults: Math.min(1000, max),
            token,
          }),
        );
        for (const v of page.voidedPurchases ?? []) {
          if (v.purchaseToken)
            out.push({ purchase_id: v.purchaseToken, voided_at_ms: Number(v.voidedTimeMillis ?? 0) });
        }
        token = page.tokenPagination?.nextPageToken ?? undefined;
      } while (token && out.length < max);
      return out.slice(0, max);
    },
  };
}
