import type { Knex } from 'knex';
import { ConnectionError, getConnectionSafe } from '../db/connections';
import { loadCredential } from '../db/connection-service';
import { failDeliveries, markStoreDeliveriesProcessed } from '../db/webhook-deliveries';
import { dropEntitlementsOfOthers, productIdForPurchase, upsertEntitlement } from '../db/entitlements';
import {
  claimStorePurchaseToken,
  linkStorePurchaseToken,
  lockStorePurchase,
  registeredOwnerOf,
} from '../db/store-purchases';
import { dropOtherProductEntitlements, supersede, supersededBy } from '../db/store-supersession';
import { findStoreSubscription, upsertStoreSubscription } from '../db/subscriptions';
import { quietOutbound } from '../db/imports';
import { grantProvisionalForStorePurchase } from '../db/provisional';
import { withTenant } from '../db/tenant-tx';
import {
  holderOf,
  insertTransfer,
  moveAccess,
  pendingTransferCount,
  pendingTransferOf,
  recordTransferEvent,
  transferSettings,
} from '../db/transfers';
import { restoreOutcome, type RestoreBehavior } from '../domain/transfers';
import { APP_RECEIPT_LIMITS } from '../domain/app-receipt';
import { customerIds, sameCustomer } from '../db/revenuecat';
import type { EntitlementState } from '../domain/entitlement';
import type { CanonicalEventKind } from '../domain/events';
import type { Mode } from '../domain/providers';
import {
  storeEntitlementOf,
  storeEntitlementState,
  olderReadStillRevokes,
  storeSubscriptionStatus,
  storeWritePlan,
  type RegistrationRefusal,
  type StorePurchaseRead,
} from '../domain/store-purchase';
import { ProviderRejectedError } from '../providers/errors';
import {
  openPurchase,
  purchaseKey,
  sealPurchase,
  tokenHashOfKey,
  type PurchaseRef,
  type StoreProvider,
} from '../providers/purchase-ref';
import { appAccountTokenFor } from '../providers/store_ios/app-account-token';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './deps';
import { entitlementWrites, transfersCounter } from '../runtime/metrics';
import { inSpan } from '../runtime/tracing';
import { toActivityFailure } from './provider-failures';

export type { StoreProvider } from '../providers/purchase-ref';

/**
 * Who the store names as buyer when the SDK made the purchase for `appUserId` (Play: the id itself; StoreKit: its UUID
 * form).
 */
export const storeUserFor = (provider: StoreProvider, appUserId: string) =>
  provider === 'store_ios' ? appAccountTokenFor(appUserId) : appUserId;

export interface ReadInput {
  tenantId: string;
  provider: StoreProvider;
  connectionId: string;
  /**
   * Which credential reads; null: the live one when the connection has it (Play shows it every purchase), else test.
   */
  mode: Mode | null;
  /** The purchase (Play: hashed and sealed token; App Store: original transaction id). */
  purchase?: PurchaseRef;
  /** A device's signed transaction (App Store registration): verified, then its id is re-read. */
  signedTransaction?: string;
  /** An App Store transaction id taken from a StoreKit 1 app receipt: read as is, the product from Apple's answer. */
  transactionId?: string;
  /** The product the client claims; the store's answer must match it. */
  storeProductId?: string;
  /** The registering app user, to compare with the buyer the store names. */
  appUserId?: string;
}

export type ReadOutcome =
  | {
      ok: true;
      read: StorePurchaseRead;
      caller_store_user: string | null;
      /** A registration's: the tenant's restore policy (docs/transfers.md); absent: keep with the original. */
      restore_behavior?: RestoreBehavior;
    }
  | { ok: false; refusal: RegistrationRefusal };

/** A transfer the claim made (docs/transfers.md): ids and times only, as a workflow carries it. */
export interface ClaimedTransfer {
  id: string;
  status: 'pending' | 'completed';
  undo_until: string | null;
}

/**
 * A store's refusal as the registration's answer: an unknown purchase is 404, anything else the store rejects is 400.
 */
function refusalOf(err: ProviderRejectedError, provider: StoreProvider): RegistrationRefusal {
  // Play answers an unknown or foreign token 400 "invalid" (410 once it is gone); the App Store 404 4040010.
  const unknown = err.status === 404 || err.status === 410 || (provider === 'store_android' && err.status === 400);
  return unknown
    ? { status: 404, error: 'purchase_not_found', detail: `The store does not know this purchase (${err.reason}).` }
    : { status: 400, error: 'invalid_purchase', detail: `The store refused this purchase: ${err.reason}` };
}

interface StoreWriteInput {
  tenantId: string;
  provider: StoreProvider;
  read: StorePurchaseRead;
  owner: string | null;
  hint: CanonicalEventKind | null;
  eventIds: string[];
  /** An import's write: no outbound entitlement event (docs/reconciliation.md, "Outbound events"). */
  quiet?: boolean;
}

/**
 * The store's answer written as the subscription record and its owner's entitlement, in the
 * caller's tenant transaction, serialised per purchase (reconcileStorePurchase below; an
 * import writes a line's claim, this and the line's outcome in one transaction).
 */
export async function writeStoreRead(
  trx: Knex.Transaction,
  input: StoreWriteInput,
): Promise<{ state: EntitlementState | null; app_user_id: string | null; stale: boolean }> {
  const { tenantId, provider } = input;
  let read = input.read;
  const externalId = read.purchase_key;
  const hash = tokenHashOfKey(provider, read.purchase_key);
  if (input.quiet) await quietOutbound(trx);
  await lockStorePurchase(trx, tenantId, provider, externalId);
  const mode: Mode = read.is_sandbox ? 'test' : 'live';
  const existing = await findStoreSubscription(trx, provider, externalId);
  const markProcessed = (subscriptionId = existing?.id ?? null) =>
    markStoreDeliveriesProcessed(trx, provider, input.eventIds, mode, subscriptionId);
  const predecessor = read.linked_purchase_key ?? null;
  // The buyer the store names is the purchaser; a family member's transaction is never held for them.
  const named = read.ownership === 'family_shared' ? null : read.store_app_user;
  // A replacement purchase (upgrade, downgrade, resubscribe) belongs to whoever registered the purchase it
  // replaces.
  const inherited = predecessor ? await registeredOwnerOf(trx, provider, tokenHashOfKey(provider, predecessor)) : null;
  const owner = input.owner ?? (await registeredOwnerOf(trx, provider, hash)) ?? inherited ?? named ?? null;
  // What this purchase granted last time, from its own record (the entitlement row may since carry another
  // purchase).
  const current: EntitlementState | null = existing ? storeEntitlementOf(existing.status) : null;
  const newerRead = existing?.store_read_at ? new Date(existing.store_read_at).toISOString() : null;
  if (newerRead && newerRead > read.read_at) {
    if (!olderReadStillRevokes(read, current, input.hint)) {
      await markProcessed();
      return { state: current, app_user_id: owner, stale: true };
    }
    // The revocation is written with the newer answer's facts: only the state changes.
    const periodEnd = existing!.current_period_end;
    read = { ...read, read_at: newerRead, expires_at: periodEnd ? new Date(periodEnd).toISOString() : read.expires_at };
  }
  const state = storeEntitlementState(read, current, input.hint);
  if (!state) {
    await markProcessed();
    return { state: null, app_user_id: owner, stale: false };
  }
  const plan = storeWritePlan(state, predecessor !== null, await supersededBy(trx, provider, externalId));
  const productId = await productIdForPurchase(trx, provider, read.store_product_id);
  const subscriptionId = await upsertStoreSubscription(trx, {
    tenantId,
    provider,
    externalId,
    status: storeSubscriptionStatus(state),
    mode,
    appUserId: owner,
    productId,
    currentPeriodEnd: read.expires_at,
    storeReadAt: read.read_at,
    country: read.country ?? null,
  });
  let entitlementId: string | null = null;
  if (owner && plan.entitlement) {
    // An entitlement held provisionally for the buyer the store named moves to the registered owner.
    await dropEntitlementsOfOthers(trx, subscriptionId, owner);
    entitlementId = await upsertEntitlement(trx, {
      tenantId,
      appUserId: owner,
      provider,
      productId,
      subscriptionId,
      state,
      isSandbox: read.is_sandbox,
      expiresAt: read.expires_at,
      graceUntil: state === 'grace_period' ? read.expires_at : null,
    });
    // The purchase now grants another product (an App Store upgrade keeps its chain): one row, the new
    // product's.
    if (entitlementId) await dropOtherProductEntitlements(trx, subscriptionId, entitlementId);
  }
  // The switch from the replaced purchase happens here, in the transaction that wrote its successor's grant.
  if (predecessor && plan.supersede && entitlementId) {
    await lockStorePurchase(trx, tenantId, provider, predecessor);
    await supersede(trx, provider, predecessor, externalId);
  }
  await linkStorePurchaseToken(trx, provider, hash, { subscriptionId, entitlementId, productId });
  await markProcessed(subscriptionId);
  return { state, app_user_id: owner, stale: false };
}

/**
 * Where a registration of a purchase someone else holds is decided, for every caller of the
 * store registration (the SDK route and the RevenueCat-compatible receipts both run it through
 * `registerStorePurchaseWorkflow`): in the claim's tenant transaction, under the claim's row
 * lock. `done`: the answer stands (refused: the holder is the owner; review: a pending transfer,
 * the holder keeps access). `transferred`: access moved to the caller, who then claims as usual.
 */
export async function applyRestorePolicy(
  trx: Knex.Transaction,
  input: { tenantId: string; provider: StoreProvider; purchaseKey: string; appUserId: string },
): Promise<
  (
    | { done: { owner: string; transfer?: ClaimedTransfer } }
    | {
        transferred: ClaimedTransfer | null;
        /** The holder is the caller under another id (an alias: domain/aliases.ts): the claim is theirs. */
        claimFor?: string;
      }
  ) & {
    /** What to count once the transaction has committed (`billing_transfers_total`). */
    counted?: { policy: RestoreBehavior; outcome: 'refused' | 'pending' | 'completed' };
  }
> {
  const purchase = {
    provider: input.provider,
    tokenHash: tokenHashOfKey(input.provider, input.purchaseKey),
    externalId: input.purchaseKey,
  };
  const held = await holderOf(trx, purchase);
  // Held for the buyer the store names (a notification before registration, under the store's own
  // user id for the caller): the caller is that buyer, and the claim moves it to them as before.
  const callerAtStore = storeUserFor(input.provider, input.appUserId);
  if (held.holder === null || held.holder === input.appUserId || held.holder === callerAtStore)
    return { transferred: null };
  const holder = held.holder;
  // Aliases are not transfers: an anonymous id signed in as the caller (or merged into them) is the same customer.
  if (await sameCustomer(trx, holder, input.appUserId)) return { transferred: null, claimFor: holder };
  const settings = await transferSettings(trx);
  const policy = settings.restore_behavior;
  const outcome = restoreOutcome({
    policy,
    holder,
    caller: input.appUserId,
    pendingCount: policy === 'review' ? await pendingTransferCount(trx) : 0,
  });
  const claimed = (t: Record<string, unknown>): ClaimedTransfer => ({
    id: String(t.id),
    status: t.status as ClaimedTransfer['status'],
    undo_until: t.undo_until ? new Date(t.undo_until as string).toISOString() : null,
  });
  if (outcome === 'refuse' || outcome === 'proceed') {
    return { done: { owner: holder }, counted: { policy, outcome: 'refused' } };
  }
  if (outcome === 'review') {
    const waiting = await pendingTransferOf(trx, purchase);
    // One pending transfer per purchase: the same request again answers it; another app user's is refused.
    if (waiting)
      return waiting.to_app_user_id === input.appUserId
        ? { done: { owner: holder, transfer: claimed(waiting) } }
        : { done: { owner: holder }, counted: { policy, outcome: 'refused' } };
    const t = await insertTransfer(trx, {
      tenantId: input.tenantId,
      status: 'pending',
      policy: 'review',
      purchase,
      from: holder,
      to: input.appUserId,
      isSandbox: held.is_sandbox,
    });
    await recordTransferEvent(trx, input.tenantId, 'transfer.pending', t);
    return { done: { owner: holder, transfer: claimed(t) }, counted: { policy, outcome: 'pending' } };
  }
  const moved = await moveAccess(trx, input.tenantId, purchase, holder, input.appUserId);
  const t = await insertTransfer(trx, {
    tenantId: input.tenantId,
    status: 'completed',
    policy: 'transfer',
    purchase,
    from: holder,
    to: input.appUserId,
    isSandbox: held.is_sandbox,
    moved,
    undoHours: settings.undo_hours,
  });
  await recordTransferEvent(trx, input.tenantId, 'transfer.completed', t);
  return { transferred: claimed(t), counted: { policy, outcome: 'completed' } };
}

/** The sealed token, if it opens for this tenant and purchase (it is only ever kept sealed). */
export function keepableSealed(
  vault: ActivityDeps['vault'],
  input: { tenantId: string; provider: StoreProvider; purchaseKey: string; sealed?: string | null },
): string | null {
  const ref = { key: input.purchaseKey, sealed: input.sealed ?? undefined };
  try {
    openPurchase(vault, input.tenantId, input.provider, ref);
    return input.sealed ?? null;
  } catch {
    return null;
  }
}

/**
 * The store's server API as one connection sees it, and a purchase read through it: the
 * activities below read one purchase each; an import reads a page of lines through one context.
 */
export function createStoreReader({
  db,
  config,
  vault,
  adapters,
}: Pick<ActivityDeps, 'db' | 'config' | 'vault' | 'adapters'>) {
  /**
   * The store's server API as this connection sees it, in `mode`; null picks the live credential
   * when the connection has one (Play shows it every purchase), else test. Paced only when the
   * caller passes its pacer (an import's run of lookups); a registration's or a notification's
   * single read is not held behind one.
   */
  async function context(
    tenantId: string,
    provider: StoreProvider,
    connectionId: string,
    mode: Mode | null,
    pace?: (m: Mode, accountRef: string) => ((endpoint?: string) => Promise<void>) | undefined,
  ): Promise<ProviderContext> {
    return withTenant(db, tenantId, async (trx) => {
      const conn = await getConnectionSafe(trx, connectionId);
      if (!conn) throw new ConnectionError('not_found', 'no such provider connection');
      const m: Mode = mode ?? (conn.has_live_credential ? 'live' : 'test');
      return {
        baseUrl: config.providerBaseUrls[provider],
        mode: m,
        credential: await loadCredential(trx, vault, connectionId, m),
        accountRef: conn.account_ref,
        pace: pace?.(m, conn.account_ref),
      };
    });
  }

  /** The context, or the refusal a registration answers when the connection cannot read purchases. */
  async function contextOrRefusal(
    ...args: Parameters<typeof context>
  ): Promise<ProviderContext | { refusal: RegistrationRefusal }> {
    try {
      return await context(...args);
    } catch (err) {
      if (err instanceof ConnectionError)
        return {
          refusal: {
            status: 400,
            error: 'invalid_request',
            detail: `The ${args[1]} connection cannot read purchases: ${err.message}.`,
          },
        };
      throw err;
    }
  }

  /**
   * Re-read a purchase from the store's server API with the tenant's credential: the client's
   * and the notification's word are never taken. Only the reduced answer (no raw payload) goes
   * back into a workflow's history.
   */
  async function read(ctx: ProviderContext, input: ReadInput): Promise<ReadOutcome> {
    const adapter = adapters[input.provider];
    try {
      let purchaseId = input.purchase ? openPurchase(vault, input.tenantId, input.provider, input.purchase) : '';
      let product = input.storeProductId;
      if (input.signedTransaction !== undefined) {
        const ids = await adapter.verifySignedTransaction!(ctx, input.signedTransaction);
        purchaseId = ids.transaction_id;
        product = ids.product_id;
      } else if (input.transactionId !== undefined) {
        purchaseId = input.transactionId;
        product = undefined;
      }
      // The answer shows the store as of no earlier than the request's start: that is its place in the order of
      // reads.
      const readAt = new Date().toISOString();
      const p = await adapter.fetchStorePurchase!(ctx, purchaseId, product);
      const read: StorePurchaseRead = {
        provider: input.provider,
        // The token itself never goes back into the workflow's history: its key does.
        purchase_key: purchaseKey(input.provider, p.purchase_id),
        store_product_id: p.store_product_id,
        store_app_user: p.app_user_id ?? null,
        is_sandbox: p.is_sandbox,
        state: p.state,
        expires_at: p.expires_at ?? null,
        // The App Store has no server-side acknowledgement (the device finishes the transaction).
        acknowledged: input.provider === 'store_ios' ? true : p.acknowledged === true,
        read_at: readAt,
        ...(p.linked_purchase_id ? { linked_purchase_key: purchaseKey(input.provider, p.linked_purchase_id) } : {}),
        ...(p.ownership ? { ownership: p.ownership } : {}),
        ...(p.country ? { country: p.country } : {}),
      };
      return {
        ok: true,
        read,
        caller_store_user: input.appUserId ? storeUserFor(input.provider, input.appUserId) : null,
      };
    } catch (err) {
      if (err instanceof ProviderRejectedError) return { ok: false, refusal: refusalOf(err, input.provider) };
      throw toActivityFailure(err);
    }
  }

  return { context, contextOrRefusal, read };
}

/** What a StoreKit 1 app receipt's customer bought: their distinct purchases, newest first, or the store's refusal. */
export type CustomerPurchasesOutcome =
  { ok: true; purchases: string[]; more: boolean } | { ok: false; refusal: RegistrationRefusal };

export function createStorePurchaseActivities(deps: ActivityDeps) {
  const { db, config, vault, adapters } = deps;
  const reader = createStoreReader(deps);
  /** The sealed token, if it opens for this tenant and purchase (it is only ever kept sealed). */
  const keepable = (input: {
    tenantId: string;
    provider: StoreProvider;
    purchaseKey: string;
    sealed?: string | null;
  }) => keepableSealed(vault, input);

  return {
    /**
     * Re-read a purchase from the store's server API with the tenant's credential: the client's
     * and the notification's word are never taken. The credential is decrypted here and dropped;
     * only the reduced answer (no raw payload) goes back into the workflow's history.
     */
    async readStorePurchase(input: ReadInput): Promise<ReadOutcome> {
      const ctx = await reader.contextOrRefusal(input.tenantId, input.provider, input.connectionId, input.mode);
      if ('refusal' in ctx) return { ok: false, refusal: ctx.refusal };
      const out = await reader.read(ctx, input);
      // A registration: the restore policy decides what a purchase another app user holds does.
      const caller = input.appUserId;
      if (!out.ok || caller === undefined) return out;
      return withTenant(db, input.tenantId, async (trx) => {
        const settings = await transferSettings(trx);
        // The buyer the store names is the caller under another id (an alias): the caller is that buyer.
        const named = out.read.store_app_user;
        const ids = named && named !== out.caller_store_user ? await customerIds(trx, caller) : [];
        const alias = ids.find((id) => storeUserFor(input.provider, id) === named);
        return { ...out, ...(alias ? { caller_store_user: named } : {}), restore_behavior: settings.restore_behavior };
      });
    },

    /**
     * The distinct purchases (original transaction ids, newest first) of the App Store customer
     * who made `transactionId`, read from their transaction history with the tenant's credential,
     * within APP_RECEIPT_LIMITS. The connection is read in the tenant's transaction: another
     * tenant's is none. Only ids go back into the workflow's history.
     */
    async readCustomerPurchases(input: {
      tenantId: string;
      connectionId: string;
      mode: Mode;
      transactionId: string;
    }): Promise<CustomerPurchasesOutcome> {
      const ctx = await reader.contextOrRefusal(input.tenantId, 'store_ios', input.connectionId, input.mode);
      if ('refusal' in ctx) return { ok: false, refusal: ctx.refusal };
      const adapter = adapters.store_ios;
      if (!adapter.listCustomerPurchases) throw new Error('store_ios adapter cannot read a transaction history');
      try {
        const got = await adapter.listCustomerPurchases(ctx, input.transactionId, APP_RECEIPT_LIMITS);
        return { ok: true, purchases: got.purchases, more: got.more };
      } catch (err) {
        if (err instanceof ProviderRejectedError) return { ok: false, refusal: refusalOf(err, 'store_ios') };
        throw toActivityFailure(err);
      }
    },

    /**
     * The purchase's owner: the first app user to register it. The unique key (tenant, provider,
     * token hash) decides between concurrent claims; a loser reads the winner back. A Play
     * purchase's sealed token is kept with the claim, for the reconciliation's re-read
     * (activities/store-reconciliation.ts); one that does not open for this purchase is not kept.
     */
    async claimStorePurchase(input: {
      tenantId: string;
      provider: StoreProvider;
      purchaseKey: string;
      appUserId: string;
      /** Play: the token as the registration or import carries it, sealed by the vault. */
      sealed?: string | null;
      /** The store's answer that confirmed the purchase: provisional access for its owner until the write. */
      confirmed?: { storeProductId: string; isSandbox: boolean; readAt: string; grantsAccess: boolean };
    }): Promise<{ owner: string; transfer?: ClaimedTransfer; same_customer?: true }> {
      const key = {
        tenantId: input.tenantId,
        provider: input.provider,
        tokenHash: tokenHashOfKey(input.provider, input.purchaseKey),
      };
      const kept = input.provider === 'store_android' && input.sealed ? keepable(input) : null;
      let counted: Awaited<ReturnType<typeof applyRestorePolicy>>['counted'];
      const claimed = await withTenant(db, input.tenantId, async (trx) => {
        // A purchase another app user holds: the tenant's restore policy decides (domain/transfers.ts), here only.
        const policy = await applyRestorePolicy(trx, input);
        counted = policy.counted;
        if ('done' in policy) return policy.done;
        const transferred = policy.transferred;
        const claimant = policy.claimFor ?? input.appUserId;
        const owner = await claimStorePurchaseToken(trx, key, claimant, kept);
        const c = input.confirmed;
        if (c?.grantsAccess && owner === claimant) {
          const productId = await productIdForPurchase(trx, input.provider, c.storeProductId);
          if (productId)
            await grantProvisionalForStorePurchase(trx, {
              tenantId: input.tenantId,
              provider: input.provider,
              purchaseKey: input.purchaseKey,
              appUserId: owner,
              productId,
              isSandbox: c.isSandbox,
              readAt: c.readAt,
              seconds: config.provisionalAccessSeconds,
            });
        }
        return {
          owner,
          ...(transferred ? { transfer: transferred } : {}),
          ...(policy.claimFor && owner === claimant ? { same_customer: true as const } : {}),
        };
      });
      // Counted once committed.
      if (counted) transfersCounter.inc(counted);
      return claimed;
    },

    /** Play's acknowledgement (the App Store has none). A purchase already acknowledged is left alone by the caller. */
    async acknowledgeStorePurchase(input: {
      tenantId: string;
      provider: StoreProvider;
      connectionId: string;
      mode: Mode | null;
      purchase: PurchaseRef;
      storeProductId: string;
    }): Promise<void> {
      const adapter = adapters[input.provider];
      if (!adapter.acknowledgeStorePurchase) return;
      const ctx = await reader.context(input.tenantId, input.provider, input.connectionId, input.mode);
      try {
        await adapter.acknowledgeStorePurchase(
          ctx,
          openPurchase(vault, input.tenantId, input.provider, input.purchase),
          input.storeProductId,
        );
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    /**
     * Write the store's answer as the subscription record and its owner's entitlement, in one
     * tenant transaction serialised per purchase. A read older than the one the row holds is
     * dropped (the newer answer stands). With no known owner (a notification for a purchase not
     * registered yet, naming no buyer) only the subscription is written.
     */
    async reconcileStorePurchase(
      input: StoreWriteInput,
    ): Promise<{ state: EntitlementState | null; app_user_id: string | null; stale: boolean }> {
      const { tenantId, provider } = input;
      const written = await inSpan('entitlement.write', { 'billing.provider': provider }, () =>
        withTenant(db, tenantId, (trx) => writeStoreRead(trx, input)),
      );
      // Counted once committed; an entitlement is written only for a known owner.
      if (written.state && written.app_user_id) entitlementWrites.inc({ provider, state: written.state });
      return written;
    },

    /**
     * One round of Play's Voided Purchases API for a connection: the voided purchases since
     * `sinceMs` (at most `max`), each as a sealed purchase ref (tokens never enter the history),
     * and the latest void time seen as the next cursor.
     */
    async listVoidedStorePurchases(input: {
      tenantId: string;
      provider: StoreProvider;
      connectionId: string;
      sinceMs: number;
      max: number;
    }): Promise<{ purchases: PurchaseRef[]; cursorMs: number | null }> {
      const adapter = adapters[input.provider];
      if (!adapter.listVoidedPurchases) return { purchases: [], cursorMs: null };
      let ctx: ProviderContext;
      try {
        ctx = await reader.context(input.tenantId, input.provider, input.connectionId, null);
      } catch (err) {
        // Not this tenant's connection (or gone): nothing of it is read, and retrying will not change that.
        if (err instanceof ConnectionError) return { purchases: [], cursorMs: null };
        throw err;
      }
      try {
        const voided = await adapter.listVoidedPurchases(ctx, input.sinceMs, input.max);
        return {
          purchases: voided.map((v) => sealPurchase(vault, input.tenantId, input.provider, v.purchase_id)),
          cursorMs: voided.reduce<number | null>(
            (m, v) => (m === null || v.voided_at_ms > m ? v.voided_at_ms : m),
            null,
          ),
        };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    /** A notification whose purchase the store does not confirm: its delivery is failed, with the store's reason. */
    async failStoreDeliveries(input: {
      tenantId: string;
      provider: StoreProvider;
      eventIds: string[];
      reason: string;
    }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) => failDeliveries(trx, input.provider, input.eventIds, input.reason));
    },
  };
}
