import type { Mode, ProviderAdapter, ProviderContext } from '../types';
import {
  findAppId,
  listRemoteProducts,
  planFor,
  setAvailability,
  subscriptionById,
  upsertSubscription,
} from './catalogue';
import { connectClient } from './connect';
import { verifyNotification } from './notifications';
import { upsertSubscriptionPrices } from './pricing';
import { fetchPurchase, verifyClientTransaction } from './purchases';
import { bundleIdOf } from './server-api';
import { customerPurchases } from './transaction-history';
import { resolveRoots, type TrustedRoots, type VerifierConfig } from './signed-data';

export interface StoreIosAdapterOptions {
  /**
   * Roots that App Store JWS chains must end in: DER, PEM or base64 DER, or a function
   * resolving them (e.g. from the emulator's GET /__control/root-ca). Default: Apple Root CA - G3.
   */
  trustedRoots?: TrustedRoots;
  /** OCSP revocation checks; default on with Apple's root, off with configured (test) roots. */
  enableOnlineChecks?: boolean;
  /**
   * Server API base. Default: Apple's Production/Sandbox hosts (by mode) when ctx.baseUrl is
   * https://api.appstoreconnect.apple.com, otherwise ctx.baseUrl (the emulator serves both APIs).
   */
  serverApiBaseUrl?: string | ((mode: Mode) => string);
  /** Reference name of the subscription group our products go in (created when missing). */
  subscriptionGroupName?: string;
  /** Page size for App Store Connect collections (max 200). */
  pageSize?: number;
}

/**
 * store_ios: App Store Connect API for the catalogue (ES256 JWT, JSON:API), the official
 * @apple/app-store-server-library for purchases (App Store Server API) and for verifying
 * signed data (Server Notifications V2, transactions). ctx.accountRef is the app's bundle id.
 */
export function createStoreIosAdapter(opts: StoreIosAdapterOptions = {}): ProviderAdapter {
  const pageSize = Math.min(Math.max(opts.pageSize ?? 200, 1), 200);
  const groupName = opts.subscriptionGroupName ?? 'Subscriptions';
  let verifierConfig: Promise<VerifierConfig> | undefined;
  const verifier = () =>
    (verifierConfig ??= resolveRoots(opts.trustedRoots).then((roots) => ({
      roots,
      onlineChecks: opts.enableOnlineChecks ?? opts.trustedRoots === undefined,
    }))).catch((err) => {
      verifierConfig = undefined; // a failed lookup (emulator not up yet) is retried next time
      throw err;
    });
  const connect = (ctx: ProviderContext) => connectClient(ctx);

  return {
    provider: 'store_ios',
    authKind: 'store',

    async checkReachable(ctx) {
      await findAppId(connect(ctx), bundleIdOf(ctx));
    },

    listRemoteProducts: (ctx) => listRemoteProducts(connect(ctx), bundleIdOf(ctx), pageSize),

    // Apple has no idempotency header: productId (unique per app) is the match key instead.
    upsertProduct: (ctx, spec) => upsertSubscription(connect(ctx), bundleIdOf(ctx), spec, { groupName, pageSize }),

    upsertPrices: (ctx, externalProductId, spec) => upsertSubscriptionPrices(connect(ctx), externalProductId, spec),

    ensurePaymentLink: (ctx, externalProductId) => planFor(connect(ctx), externalProductId),

    async stopSales(ctx, externalProductId) {
      const c = connect(ctx);
      await subscriptionById(c, externalProductId); // 404 → rejected, rather than creating an orphan availability
      await setAvailability(c, externalProductId, []);
    },

    async verifyWebhook(input) {
      return verifyNotification(input, await verifier());
    },

    async fetchStorePurchase(ctx, purchaseId, storeProductId) {
      return fetchPurchase(ctx, purchaseId, storeProductId, await verifier(), opts.serverApiBaseUrl);
    },

    async verifySignedTransaction(ctx, signedTransaction) {
      return verifyClientTransaction(ctx, signedTransaction, await verifier(), opts.serverApiBaseUrl);
    },

    async listCustomerPurchases(ctx, transactionId, limits) {
      return customerPurchases(ctx, transactionId, limits, await verifier(), opts.serverApiBaseUrl);
    },
  };
}
