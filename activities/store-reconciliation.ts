import { heartbeat } from '@temporalio/activity';
import { listConnectionsSafe, type SafeConnection } from '../db/connections';
import { recordRepair, type HeldState } from '../db/reconciliations';
import { heldStorePurchasesOf, type HeldStorePurchase } from '../db/store-reconciliation';
import { withTenant } from '../db/tenant-tx';
import { snapshotEvents } from '../domain/provider-snapshot';
import { STORE_PROVIDERS, type Mode, type ProviderId, type StoreProviderId } from '../domain/providers';
import { storeEntitlementOf, storeHeldFacts, type PurchaseRef, type StoreRereadSkip } from '../domain/store-purchase';
import { openPurchase } from '../providers/purchase-ref';
import { reconciliationRepairs } from '../runtime/metrics';
import type { ActivityDeps } from './deps';
import { createStorePurchaseActivities, type ReadOutcome } from './store-purchases';

/** A held store purchase the run could not re-read, and why. */
export interface StoreSkip {
  provider: StoreProviderId;
  /** The purchase key (Play: the token's SHA-256; App Store: the original transaction id). */
  subscription_id: string;
  reason: StoreRereadSkip;
}

export interface StoreRepair {
  id: string;
  provider: StoreProviderId;
  subscription_id: string;
  held: HeldState | null;
  provider_state: HeldState & { cancel_at: string | null };
  applied: { id: string; kind: string }[];
  created_at: string;
}

const epoch = (iso: string | Date | null | undefined) => (iso ? Math.floor(new Date(iso).getTime() / 1000) : null);
const isoOf = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/**
 * The stores in a reconciliation: every store purchase the service holds for the customer is
 * re-read with the store's server API, as a notification's re-read is (Play
 * `purchases.subscriptionsv2.get` with the kept sealed token, the App Store's Get All Subscription
 * Statuses by original transaction id; `readStorePurchase`, through the store clients and
 * `egress/`). Where the record's status or paid-period end differs from what the store write
 * would hold for that answer, the answer is written by the same store write a registration and a
 * notification use (`reconcileStorePurchase`: serialised per purchase, the newer read wins, the same
 * owner and supersession rules), recorded as a repair of the run, told as `subscription.reconciled`
 * and counted. The stores have no list to search: a purchase the service never held is for an
 * import (docs/reconciliation.md).
 */
export function createStoreReconciliation(deps: ActivityDeps) {
  const { db, vault } = deps;
  const store = createStorePurchaseActivities(deps);

  /** The purchase as the store read takes it: a Play purchase's token is opened only to check it is kept whole. */
  function refOf(tenantId: string, h: HeldStorePurchase): PurchaseRef | StoreRereadSkip {
    if (h.provider === 'store_ios') return { key: h.external_id };
    if (!h.sealed) return 'token_not_kept';
    const ref = { key: h.external_id, sealed: h.sealed };
    try {
      openPurchase(vault, tenantId, h.provider, ref);
      return ref;
    } catch {
      return 'token_unreadable';
    }
  }

  /** The default connection first, then the others: a tenant may sell several apps at one store. */
  async function readAtStore(
    tenantId: string,
    h: HeldStorePurchase,
    purchase: PurchaseRef,
    conns: SafeConnection[],
  ): Promise<ReadOutcome | null> {
    // Play's live credential reads every purchase (as a notification's re-read does); the App Store answers per
    // environment, so a purchase is read in the mode it is held in.
    const mode: Mode | null = h.provider === 'store_android' ? null : h.mode;
    for (const c of conns) {
      const got = await store.readStorePurchase({
        tenantId,
        provider: h.provider,
        connectionId: c.id,
        mode,
        purchase,
      });
      heartbeat();
      if (got.ok) return got;
    }
    return null;
  }

  return {
    /** Re-read the customer's held purchases at each store of `kinds` (a scheduled web run names none). */
    async reconcileCustomerStores(
      input: { tenantId: string; runId: string; appUserId: string; workflowId?: string },
      kinds: readonly ProviderId[],
    ): Promise<{
      compared: number;
      repairs: StoreRepair[];
      skipped: StoreSkip[];
    }> {
      const { held, connections } = await withTenant(db, input.tenantId, async (trx) => ({
        held: await heldStorePurchasesOf(trx, input.appUserId),
        connections: (await listConnectionsSafe(trx)).filter((c) => c.is_active && c.verified_at),
      }));
      const repairs: StoreRepair[] = [];
      const skipped: StoreSkip[] = [];
      let compared = 0;
      for (const provider of STORE_PROVIDERS.filter((k) => kinds.includes(k))) {
        const conns = connections
          .filter((c) => c.provider === provider)
          .sort((a, b) => Number(b.is_default) - Number(a.is_default));
        for (const h of held.filter((x) => x.provider === provider)) {
          const skip = (reason: StoreRereadSkip) => skipped.push({ provider, subscription_id: h.external_id, reason });
          if (conns.length === 0) {
            skip('no_connection');
            continue;
          }
          const purchase = refOf(input.tenantId, h);
          if (typeof purchase === 'string') {
            skip(purchase);
            continue;
          }
          const got = await readAtStore(input.tenantId, h, purchase, conns);
          if (!got?.ok) {
            skip('not_found_at_store');
            continue;
          }
          compared++;
          const heldState: HeldState = { status: h.status, current_period_end: isoOf(h.current_period_end) };
          // What the store write would hold for this answer, by the same rules (a revoked record stays revoked).
          const facts = storeHeldFacts(got.read, storeEntitlementOf(h.status));
          if (!facts) continue;
          const same =
            facts.status === heldState.status &&
            epoch(facts.current_period_end) === epoch(heldState.current_period_end);
          if (same) continue;
          const written = await store.reconcileStorePurchase({
            tenantId: input.tenantId,
            provider,
            read: got.read,
            owner: null,
            hint: null,
            eventIds: [],
          });
          // A newer read (a notification's) reached the record first: it stands, and this run repaired nothing.
          if (written.stale || !written.state) continue;
          const providerState = {
            status: facts.status,
            current_period_end: facts.current_period_end,
            cancel_at: null,
          };
          // The state written, named as the snapshot mapping names it (its id from the facts, its kind).
          const [, stateEvent] = snapshotEvents(
            {
              provider,
              subscription_id: h.external_id,
              customer_id: null,
              app_user_id: input.appUserId,
              sku: null,
              mode: got.read.is_sandbox ? 'test' : 'live',
              status: facts.status,
              started_at: got.read.read_at,
              current_period_end: facts.current_period_end,
            },
            got.read.read_at,
            'reconciliation',
          );
          const applied = [{ id: stateEvent.id, kind: stateEvent.kind }];
          const row = await withTenant(db, input.tenantId, (trx) =>
            recordRepair(trx, {
              tenantId: input.tenantId,
              runId: input.runId,
              provider,
              subscriptionId: h.external_id,
              appUserId: input.appUserId,
              held: heldState,
              providerState,
              applied,
              workflowId: input.workflowId ?? null,
            }),
          );
          reconciliationRepairs.inc({ provider });
          repairs.push({
            id: row.id,
            provider,
            subscription_id: h.external_id,
            held: heldState,
            provider_state: providerState,
            applied,
            created_at: new Date(row.created_at).toISOString(),
          });
        }
      }
      return { compared, repairs, skipped };
    },
  };
}
