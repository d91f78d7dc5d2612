import { isKnownMiss, rememberMiss } from '../../db/store-purchase-misses';
import { ApiError } from '../../operations/errors';
import type { Services } from '../../operations/services';
import { callWithin } from '../../temporal/client';
import { readAppReceiptPurchases } from '../../temporal/workflow-starts';
import type { AppActor } from '../sdk/auth';
import { clientRateLimited, registrationBuckets, takeClientTokens } from '../sdk/limits';
import { MISS_TTL_SECONDS, missKey } from '../sdk/purchase-misses';
import { purchaseNotFound, readyStoreConnection, registerStorePurchaseFor, WAIT_MS } from '../sdk/store-purchases';

/**
 * Refusals that concern one purchase of the receipt (another app user holds it and the tenant's
 * restore policy keeps it with them, the store does not know it or refuses it): the others are
 * still registered. Anything else (a limit, the store or the workflow engine away) stops the
 * receipt; the same receipt again re-runs it to the same rows.
 */
const PER_PURCHASE = new Set(['purchase_token_reused', 'purchase_not_found', 'invalid_purchase', 'purchase_pending']);

/** What a StoreKit 1 app receipt came to: how many purchases were registered, and whether some were left out. */
export interface AppReceiptOutcome {
  registered: number;
  refused: number;
  /** The customer has purchases beyond the bound (domain/app-receipt.ts APP_RECEIPT_LIMITS). */
  leftOut: boolean;
}

/**
 * A StoreKit 1 app receipt, as RevenueCat registers one: the receipt is not believed, the one
 * transaction id taken out of it names the customer, whose distinct purchases (subscriptions and
 * non-consumables) are read from the App Store's transaction history (workflows/app-receipt.ts,
 * bounded before it starts) and each registered through the one store registration
 * (registerStorePurchaseFor: the same checks, limits, provisional access and restore policy per
 * purchase). The history read spends one token of the registration lanes, as a registration does.
 *
 * Answers when at least one purchase is the caller's (or moved to them, or is up for review);
 * when none is, the first purchase's refusal (e.g. 409 when another app user holds it all).
 */
export async function registerAppReceipt(
  services: Services,
  actor: AppActor,
  appUserId: string,
  transactionId: string,
  clientAddress: string,
): Promise<AppReceiptOutcome> {
  const conn = await readyStoreConnection(services, actor, 'store_ios');
  const probe = { provider: 'store_ios', transaction_id: transactionId } as const;
  const missHash = missKey(conn.id, actor.mode, probe);
  if (await isKnownMiss(services.db, actor.tenantId, 'store_ios', missHash)) throw purchaseNotFound();
  const lane = await takeClientTokens(services.db, actor.tenantId, registrationBuckets(appUserId, clientAddress));
  if (!lane.allowed) throw clientRateLimited(lane);

  const client = services.temporal!.client;
  let history;
  try {
    history = await callWithin(client, WAIT_MS, () =>
      readAppReceiptPurchases(client, services.config.taskQueue, {
        tenantId: actor.tenantId,
        connectionId: conn.id,
        mode: actor.mode,
        transactionId,
      }),
    );
  } catch {
    throw new ApiError(
      503,
      'temporarily_unavailable',
      'The receipt is being read; retry shortly.',
      {},
      { 'Retry-After': '2' },
    );
  }
  if (!history.ok) {
    if (history.error === 'purchase_not_found')
      await rememberMiss(services.db, actor.tenantId, 'store_ios', missHash, MISS_TTL_SECONDS);
    throw new ApiError(
      history.status,
      history.error,
      history.detail,
      {},
      history.status === 503 ? { 'Retry-After': '5' } : {},
    );
  }
  // A customer whose history holds nothing lasting (consumables only): the receipt's own transaction, as before.
  const purchases = history.purchases.length ? history.purchases : [transactionId];
  let registered = 0;
  let firstRefusal: ApiError | undefined;
  for (const original of purchases) {
    try {
      await registerStorePurchaseFor(
        services,
        actor,
        { provider: 'store_ios', app_user_id: appUserId, transaction_id: original },
        clientAddress,
      );
      registered++;
    } catch (err) {
      if (!(err instanceof ApiError) || !PER_PURCHASE.has(err.code)) throw err;
      firstRefusal ??= err;
    }
  }
  if (registered === 0) throw firstRefusal ?? purchaseNotFound();
  return { registered, refused: purchases.length - registered, leftOut: history.more };
}
