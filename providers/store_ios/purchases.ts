import {
  Environment,
  Status,
  type JWSRenewalInfoDecodedPayload,
  type JWSTransactionDecodedPayload,
  type StatusResponse,
} from '@apple/app-store-server-library';
import { countryFromAlpha3 } from '../../domain/country';
import { ProviderError, ProviderRejectedError } from '../errors';
import type { ProviderContext, SignedTransactionIds, StorePurchase } from '../types';
import { PROVIDER } from './errors';
import { bundleIdOf, callServerApi, environmentFor, serverApiClient } from './server-api';
import { peekJws, verificationReason, verifierFor, type VerifierConfig } from './signed-data';

const iso = (ms?: number) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);

function stateOf(
  status: Status | number | undefined,
  latest: JWSTransactionDecodedPayload,
  now: number,
): StorePurchase['state'] {
  if (latest.revocationDate !== undefined) return 'revoked';
  switch (status) {
    case Status.ACTIVE:
      return 'active';
    case Status.BILLING_GRACE_PERIOD:
      return 'grace_period';
    case Status.REVOKED:
      return 'revoked';
    case Status.EXPIRED:
    case Status.BILLING_RETRY: // in billing retry without grace the customer has no access
      return 'expired';
    default:
      return latest.expiresDate === undefined || latest.expiresDate > now ? 'active' : 'expired';
  }
}

/**
 * Re-fetch a purchase from the App Store Server API: Get Transaction Info for the id the
 * device reported, then Get All Subscription Statuses for the subscription's current state
 * and latest transaction. Every signed field is verified (chain to a trusted root, bundle
 * id, environment) before it is believed.
 */
export async function fetchPurchase(
  ctx: ProviderContext,
  transactionId: string,
  storeProductId: string | undefined,
  cfg: VerifierConfig,
  serverBase?: string | ((mode: 'live' | 'test') => string),
): Promise<StorePurchase> {
  const client = serverApiClient(ctx, serverBase);
  // Each endpoint has its own allowance (domain/rate-limits.ts LOOKUP_LIMITS): paced apart.
  await ctx.pace?.('transactions');
  const info = await callServerApi(client, (c) => c.getTransactionInfo(transactionId));
  if (!info.signedTransactionInfo)
    throw new ProviderRejectedError(PROVIDER, `transaction ${transactionId} came back unsigned`);

  let statuses: StatusResponse | undefined;
  const environment = environmentFor(ctx.mode);
  const bundleId = bundleIdOf(ctx);
  try {
    // Production verification pins the app's Apple ID; the status response (from Apple, over the authenticated API)
    // names it.
    await ctx.pace?.('subscriptions');
    statuses = await callServerApi(client, (c) => c.getAllSubscriptionStatuses(transactionId)).catch((err) => {
      if ((err as { status?: number }).status === 404) return undefined; // not a subscription
      throw err;
    });
    const verifier = verifierFor(
      cfg,
      environment,
      bundleId,
      environment === Environment.PRODUCTION ? statuses?.appAppleId : undefined,
    );
    const transaction = await verifier.verifyAndDecodeTransaction(info.signedTransactionInfo);
    const original = transaction.originalTransactionId ?? transaction.transactionId;
    const entry = statuses?.data
      ?.flatMap((g) => g.lastTransactions ?? [])
      .find((t) => t.originalTransactionId === original);
    const latest = entry?.signedTransactionInfo
      ? await verifier.verifyAndDecodeTransaction(entry.signedTransactionInfo)
      : transaction;
    const renewal: JWSRenewalInfoDecodedPayload | undefined = entry?.signedRenewalInfo
      ? await verifier.verifyAndDecodeRenewalInfo(entry.signedRenewalInfo)
      : undefined;
    // Upgrades and crossgrades change the product within a group, so any of these may be the one asked about.
    const products = new Set([transaction.productId, latest.productId, renewal?.autoRenewProductId].filter(Boolean));
    if (storeProductId && !products.has(storeProductId)) {
      throw new ProviderRejectedError(
        PROVIDER,
        `transaction ${transactionId} is for ${latest.productId}, not ${storeProductId}`,
        { code: 'PRODUCT_MISMATCH' },
      );
    }
    const state = stateOf(entry?.status, latest, Date.now());
    return {
      provider: 'store_ios',
      purchase_id: original ?? transactionId,
      store_product_id: latest.productId ?? transaction.productId ?? '',
      app_user_id: latest.appAccountToken ?? transaction.appAccountToken ?? null,
      is_sandbox: latest.environment === Environment.SANDBOX,
      state,
      expires_at:
        state === 'grace_period' && renewal?.gracePeriodExpiresDate
          ? iso(renewal.gracePeriodExpiresDate)
          : iso(latest.expiresDate),
      ownership:
        String(latest.inAppOwnershipType ?? transaction.inAppOwnershipType) === 'FAMILY_SHARED'
          ? 'family_shared'
          : 'purchased',
      // The App Store country of the purchase (alpha-3 in the signed transaction).
      ...(countryFromAlpha3(latest.storefront ?? transaction.storefront)
        ? { country: countryFromAlpha3(latest.storefront ?? transaction.storefront) }
        : {}),
      raw: { transaction, latest, renewal: renewal ?? null, status: entry?.status ?? null },
    };
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderRejectedError(PROVIDER, `App Store signed data did not verify: ${verificationReason(err)}`, {
      code: 'VERIFICATION_FAILED',
    });
  }
}

/**
 * A signed transaction a device handed over (StoreKit's `jwsRepresentation`): verified like
 * every App Store JWS before any field is believed. Production verification pins the app's
 * Apple ID, which only Apple's authenticated answer names, so a live check asks the Server API
 * for it first. A JWS from the other environment is refused with a reason that says so.
 */
export async function verifyClientTransaction(
  ctx: ProviderContext,
  signedTransaction: string,
  cfg: VerifierConfig,
  serverBase?: string | ((mode: 'live' | 'test') => string),
): Promise<SignedTransactionIds> {
  let peek: Record<string, unknown>;
  try {
    peek = peekJws(signedTransaction);
  } catch {
    throw new ProviderRejectedError(PROVIDER, 'signed_transaction is not a compact JWS', {
      code: 'VERIFICATION_FAILED',
    });
  }
  const environment = environmentFor(ctx.mode);
  if (peek.environment !== environment) {
    throw new ProviderRejectedError(
      PROVIDER,
      `the signed transaction is from the ${String(peek.environment)} environment, not ${environment}`,
      { code: 'ENVIRONMENT_MISMATCH' },
    );
  }
  let appAppleId: number | undefined;
  if (environment === Environment.PRODUCTION) {
    const id = typeof peek.transactionId === 'string' ? peek.transactionId : '';
    const statuses = await callServerApi(serverApiClient(ctx, serverBase), (c) => c.getAllSubscriptionStatuses(id));
    appAppleId = statuses.appAppleId;
  }
  try {
    const tx = await verifierFor(cfg, environment, bundleIdOf(ctx), appAppleId).verifyAndDecodeTransaction(
      signedTransaction,
    );
    if (!tx.transactionId || !tx.productId) throw new Error('transaction names no id or product');
    return {
      transaction_id: tx.transactionId,
      original_transaction_id: tx.originalTransactionId ?? tx.transactionId,
      product_id: tx.productId,
    };
  } catch (err) {
    throw new ProviderRejectedError(PROVIDER, `the signed transaction did not verify: ${verificationReason(err)}`, {
      code: 'VERIFICATION_FAILED',
    });
  }
}
