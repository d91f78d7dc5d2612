import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ClaimedTransfer } from '../activities/store-purchases';
import type { RestoreBehavior } from '../domain/transfers';
import { startTransfer } from './transfer';
import type { CanonicalEventKind } from '../domain/events';
import type { Mode } from '../domain/providers';
import {
  acknowledgementDue,
  registrationRefusal,
  type PurchaseRef,
  type RegistrationRefusal,
  type StoreProvider,
} from '../domain/store-purchase';
import type { EntitlementState } from '../domain/entitlement';
import { storeUnavailable } from './activity-failure';

// The client waits on a registration: a store that stays down is answered 503 after a few tries.
const { readStorePurchase: readForClient, acknowledgeStorePurchase } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '300 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 3 },
});
// A notification has no one waiting: its re-read retries until the store answers.
const { readStorePurchase: readForNotification } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
// Play refunds a purchase left unacknowledged for three days: a notification's acknowledgement retries well inside
// that.
const { acknowledgeStorePurchase: acknowledgeForNotification } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes', maximumAttempts: 200 },
});
const { claimStorePurchase, reconcileStorePurchase, failStoreDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

export interface RegisterStorePurchaseInput {
  tenantId: string;
  provider: StoreProvider;
  connectionId: string;
  /** The publishable key's mode: pk_test_ registers sandbox purchases only, pk_live_ real ones only. */
  mode: Mode;
  appUserId: string;
  /** Android: the purchase token (hashed and sealed, never in clear) and the Play product the client names. */
  purchase?: PurchaseRef;
  storeProductId?: string;
  /** iOS: the signed transaction StoreKit handed the device. */
  signedTransaction?: string;
  /** iOS: the transaction id a StoreKit 1 app receipt names (the receipt itself is never trusted, nor kept). */
  transactionId?: string;
}

export type RegisterStorePurchaseResult =
  | {
      ok: true;
      app_user_id: string;
      is_sandbox: boolean;
      state: EntitlementState | null;
      /**
       * The purchase was held by another app user and the tenant's restore policy moved it
       * (`completed`) or put it up for review (`pending`: the holder keeps access; nothing was written for the caller).
       */
      transfer?: ClaimedTransfer;
    }
  | ({
      ok: false;
      /** A restore refused by the policy before any claim (the store names another buyer): the api counts it. */
      restore_refused?: RestoreBehavior;
    } & RegistrationRefusal);

/**
 * `POST /v1/sdk/store-purchases` (workflow id `store-purchase-<tenant>-<provider>-<hash of
 * tenant and token>`): re-read the purchase from the store, refuse what the key may not register or another
 * app user owns, claim the token for this app user, acknowledge it at the store, and write the
 * subscription and entitlement from the store's answer. A repeat by the same user runs the same
 * steps again and ends in the same rows.
 */
export async function registerStorePurchaseWorkflow(
  input: RegisterStorePurchaseInput,
): Promise<RegisterStorePurchaseResult> {
  const base = { tenantId: input.tenantId, provider: input.provider, connectionId: input.connectionId };
  let got;
  try {
    got = await readForClient({
      ...base,
      mode: input.mode,
      purchase: input.purchase,
      storeProductId: input.storeProductId,
      signedTransaction: input.signedTransaction,
      ...(input.transactionId === undefined ? {} : { transactionId: input.transactionId }),
      appUserId: input.appUserId,
    });
  } catch (err) {
    return storeUnavailable(err);
  }
  if (!got.ok) return { ok: false, ...got.refusal };
  const { read } = got;
  const refusal = registrationRefusal(
    read,
    input.mode,
    got.caller_store_user ?? input.appUserId,
    got.restore_behavior ?? 'keep_with_original',
  );
  if (refusal)
    return {
      ok: false,
      ...refusal,
      ...(refusal.error === 'purchase_token_reused'
        ? { restore_refused: got.restore_behavior ?? 'keep_with_original' }
        : {}),
    };

  const { owner, transfer, same_customer } = await claimStorePurchase({
    tenantId: input.tenantId,
    provider: input.provider,
    purchaseKey: read.purchase_key,
    appUserId: input.appUserId,
    // Kept sealed with the claim: a reconciliation re-reads the purchase with it (Play).
    sealed: input.purchase?.sealed ?? null,
    // The store confirmed it: premium provisionally from the claim, before the write below
    // (docs/provisional-access.md).
    confirmed: {
      storeProductId: read.store_product_id,
      isSandbox: read.is_sandbox,
      readAt: read.read_at,
      grantsAccess: read.state === 'active' || read.state === 'grace_period',
    },
  });
  // A transfer has its own workflow: its decision and its undo window (workflows/transfer.ts).
  if (transfer) await startTransfer(input.tenantId, input.provider, transfer);
  if (transfer?.status === 'pending')
    return { ok: true, app_user_id: input.appUserId, is_sandbox: read.is_sandbox, state: null, transfer };
  // Held by the caller under another id (an alias, docs/transfers.md): theirs, and written for that id.
  if (owner !== input.appUserId && !same_customer) {
    return {
      ok: false,
      status: 409,
      error: 'purchase_token_reused',
      detail: 'This purchase is already registered to another app user.',
    };
  }
  if (!read.acknowledged && input.purchase) {
    try {
      await acknowledgeStorePurchase({
        ...base,
        mode: input.mode,
        purchase: input.purchase,
        storeProductId: read.store_product_id,
      });
    } catch (err) {
      // The purchase is the user's either way; an unacknowledged one is refunded by Play, and its RTDN revokes it here.
      log.warn('acknowledgement failed; the entitlement is written from the store answer', {
        error: String((err as Error).message),
      });
    }
  }
  const r = await reconcileStorePurchase({
    tenantId: input.tenantId,
    provider: input.provider,
    read,
    owner,
    hint: null,
    eventIds: [],
  });
  return {
    ok: true,
    // The caller, also when they hold it under another id (an alias): the answer is about them.
    app_user_id: same_customer ? input.appUserId : owner,
    is_sandbox: read.is_sandbox,
    state: r.state,
    ...(transfer ? { transfer } : {}),
  };
}

export interface StoreNotificationInput {
  tenantId: string;
  provider: StoreProvider;
  connectionId: string;
  /**
   * iOS: the notification's environment; Android: null (RTDN carries none; the live credential sees every purchase).
   */
  mode: Mode | null;
  eventId: string;
  kind: CanonicalEventKind;
  /** The purchase the notification names (Play: hashed and sealed token; App Store: original transaction id). */
  purchase: PurchaseRef;
}

/**
 * One verified store notification (`store-notification-<tenant>-<provider>-<event id>`): a hint that a
 * purchase changed. The purchase is re-read from the store's server API and written from that
 * answer; the notification's kind only settles what the store cannot say (Play has no
 * "revoked" state). A purchase the store does not confirm fails the delivery with its reason.
 */
export async function storeNotificationWorkflow(
  input: StoreNotificationInput,
): Promise<{ state: EntitlementState | null }> {
  const base = { tenantId: input.tenantId, provider: input.provider };
  const got = await readForNotification({
    ...base,
    connectionId: input.connectionId,
    mode: input.mode,
    purchase: input.purchase,
  });
  if (!got.ok) {
    await failStoreDeliveries({
      ...base,
      eventIds: [input.eventId],
      reason: `${got.refusal.error}: ${got.refusal.detail}`,
    });
    return { state: null };
  }
  const r = await reconcileStorePurchase({
    ...base,
    read: got.read,
    owner: null,
    hint: input.kind,
    eventIds: [input.eventId],
  });
  // A purchase the app never registered is acknowledged here, inside Play's three days.
  if (acknowledgementDue(got.read, r.state)) {
    try {
      await acknowledgeForNotification({
        ...base,
        connectionId: input.connectionId,
        mode: input.mode,
        purchase: input.purchase,
        storeProductId: got.read.store_product_id,
      });
    } catch (err) {
      log.warn('acknowledgement failed; Play refunds the purchase after three days and its notification revokes it', {
        error: String((err as Error).message),
      });
    }
  }
  return { state: r.state };
}
