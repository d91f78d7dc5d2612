import {
  Environment,
  GetTransactionHistoryVersion,
  Order,
  ProductType,
  type HistoryResponse,
} from '@apple/app-store-server-library';
import { ProviderError, ProviderRejectedError } from '../errors';
import type { CustomerPurchases, ProviderContext } from '../types';
import { PROVIDER } from './errors';
import { bundleIdOf, callServerApi, environmentFor, serverApiClient } from './server-api';
import { verificationReason, verifierFor, type VerifierConfig } from './signed-data';

/**
 * The purchases that unlock something: subscriptions and non-consumables. Consumables are left
 * out (each is a purchase of its own and unlocks nothing that lasts).
 */
const LASTING: ProductType[] = [ProductType.AUTO_RENEWABLE, ProductType.NON_RENEWABLE, ProductType.NON_CONSUMABLE];

/**
 * A customer's distinct purchases in this app, from any one of their transaction ids: Get
 * Transaction History (v2), newest first, paged with `revision`, every signed transaction
 * verified as every App Store JWS is (chain, bundle id, environment; in Production the app's
 * Apple ID that Apple's authenticated answer names), and the answer's own bundle id and
 * environment checked. Transactions are grouped by `originalTransactionId`, so a subscription's
 * renewals are one purchase, in the order of their latest transaction.
 *
 * Bounded before it starts: at most `maxPages` pages (Apple sends 20 transactions a page) and
 * `maxPurchases` purchases; `more` says whether the customer has purchases beyond those (older
 * ones, or on pages not read).
 */
export async function customerPurchases(
  ctx: ProviderContext,
  transactionId: string,
  limits: { maxPages: number; maxPurchases: number },
  cfg: VerifierConfig,
  serverBase?: string | ((mode: 'live' | 'test') => string),
): Promise<CustomerPurchases> {
  const client = serverApiClient(ctx, serverBase);
  const environment = environmentFor(ctx.mode);
  const bundleId = bundleIdOf(ctx);
  const purchases: string[] = [];
  const seen = new Set<string>();
  let revision: string | null = null;
  for (let page = 0; page < limits.maxPages; page++) {
    await ctx.pace?.('history');
    const res: HistoryResponse = await callServerApi(client, (c) =>
      c.getTransactionHistory(
        transactionId,
        revision,
        { sort: Order.DESCENDING, productTypes: LASTING },
        GetTransactionHistoryVersion.V2,
      ),
    );
    if (res.bundleId !== bundleId || res.environment !== environment)
      throw new ProviderRejectedError(
        PROVIDER,
        `the transaction history is of ${String(res.bundleId)} (${String(res.environment)}), not ${bundleId} (${environment})`,
        { code: 'ENVIRONMENT_MISMATCH' },
      );
    const verifier = verifierFor(
      cfg,
      environment,
      bundleId,
      environment === Environment.PRODUCTION ? res.appAppleId : undefined,
    );
    for (const signed of res.signedTransactions ?? []) {
      let original: string | undefined;
      try {
        const tx = await verifier.verifyAndDecodeTransaction(signed);
        original = tx.originalTransactionId ?? tx.transactionId;
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        throw new ProviderRejectedError(PROVIDER, `App Store signed data did not verify: ${verificationReason(err)}`, {
          code: 'VERIFICATION_FAILED',
        });
      }
      if (!original || seen.has(original)) continue;
      seen.add(original);
      if (purchases.length === limits.maxPurchases) return { purchases, more: true };
      purchases.push(original);
    }
    if (!res.hasMore) return { purchases, more: false };
    revision = res.revision ?? null;
    if (revision === null) return { purchases, more: true };
  }
  return { purchases, more: true };
}
