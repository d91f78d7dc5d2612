import { heartbeat } from '@temporalio/activity';
import { listConnectionsSafe, type SafeConnection } from '../db/connections';
import { loadCredential } from '../db/connection-service';
import { heldSubscriptionsOf, recordRepair, type HeldState } from '../db/reconciliations';
import { withTenant } from '../db/tenant-tx';
import { snapshotEvents, type SubscriptionSnapshot } from '../domain/provider-snapshot';
import { STORE_PROVIDERS, WEB_PROVIDERS, type Mode, type ProviderId, type WebProviderId } from '../domain/providers';
import { createPacer } from '../providers/pacing';
import { reconciliationRepairs } from '../runtime/metrics';
import { ProviderError } from '../providers/errors';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './deps';
import { createWorkTurns } from './work-turns';
import type { Parked } from '../domain/import-concurrency';
import { toActivityFailure } from './provider-failures';
import { createStoreReconciliation, type StoreSkip } from './store-reconciliation';

/**
 * A subscription the service does not hold at all (its every webhook lost) is found by paging the
 * provider's list for the app user's metadata: at most this many pages of 100 per mode, so one
 * refresh of a large account stays a bounded number of calls (docs/reconciliation.md).
 */
export const DISCOVERY_PAGES = 10;

export interface Repair {
  id: string;
  provider: ProviderId;
  subscription_id: string;
  held: HeldState | null;
  provider_state: HeldState & { cancel_at: string | null };
  applied: { id: string; kind: string }[];
  created_at: string;
}

export interface RefreshOutcome {
  /** Subscriptions of the customer the service held or a provider named. */
  compared: number;
  repairs: Repair[];
  /** Held store purchases that could not be re-read, and why (activities/store-reconciliation.ts). */
  skipped: StoreSkip[];
}

const epoch = (iso: string | Date | null | undefined) => (iso ? Math.floor(new Date(iso).getTime() / 1000) : null);

/** What the comparison looks at: the status and the end of the paid period (a renewal a lost webhook never told). */
export function differs(held: HeldState | null, snap: SubscriptionSnapshot): boolean {
  if (!held) return true;
  return held.status !== snap.status || epoch(held.current_period_end) !== epoch(snap.current_period_end);
}

/** Who a comparison is for and which run records it: ids only. */
export interface CustomerRun {
  tenantId: string;
  runId: string;
  appUserId: string;
  /** The workflow of a scheduled run (its id carries the scheduled time); absent: the refresh's own. */
  workflowId?: string;
}

export interface CompareOptions {
  /**
   * Search the provider's list (bounded) for subscriptions naming the app user that the service
   * never heard of: the refresh does; a scheduled run, comparing many customers, does not.
   */
  discover: boolean;
  /** Provider contexts already made in this activity (a scheduled page compares many customers). */
  contexts?: Map<string, ProviderContext>;
}

/**
 * The one per-customer comparison both paths call, the on-demand refresh and the scheduled runs
 * (docs/reconciliation.md), for the provider kinds they name.
 */
export function createCustomerReconciler(deps: ActivityDeps) {
  const { db, config, vault, adapters, pacer = createPacer() } = deps;
  const { reconcileCustomerStores } = createStoreReconciliation(deps);

  async function contextFor(
    tenantId: string,
    conn: SafeConnection,
    mode: Mode,
    cache?: Map<string, ProviderContext>,
  ): Promise<ProviderContext> {
    const key = `${conn.id}:${mode}`;
    const known = cache?.get(key);
    if (known) return known;
    const made = await withTenant(db, tenantId, async (trx) => ({
      baseUrl: config.providerBaseUrls[conn.provider],
      mode,
      credential: await loadCredential(trx, vault, conn.id, mode),
      accountRef: conn.account_ref,
      pace: pacer.pace(conn.provider, mode, conn.account_ref),
    }));
    cache?.set(key, made);
    return made;
  }

  async function provider<T>(p: WebProviderId, ctx: ProviderContext, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof ProviderError && err.errorClass === 'rate_limited')
        pacer.holdOff(p, ctx.mode, ctx.accountRef, err.retryAfterMs ?? 1000);
      throw toActivityFailure(err);
    }
  }

  return {
    /**
     * Re-read one customer at each provider of `kinds` the tenant has a proven connection to and
     * apply what differs: each subscription the service holds for the app user is read with the
     * provider's get-one call, and (`discover`) the provider's list is searched (bounded) for ones
     * it holds and we never heard of. A difference hands the snapshot's events, tagged
     * `reconciliation`, to the customer's own lifecycle workflow and is recorded as a repair of
     * the run. Nothing differs: nothing is written.
     */
    async reconcileCustomer(
      input: CustomerRun,
      kinds: readonly ProviderId[],
      opts: CompareOptions,
    ): Promise<RefreshOutcome> {
      if (!deps.handOverLifecycle) throw new Error('a reconciliation needs the worker’s lifecycle hand-over');
      const { held, connections } = await withTenant(db, input.tenantId, async (trx) => ({
        held: await heldSubscriptionsOf(trx, input.appUserId),
        connections: (await listConnectionsSafe(trx)).filter((c) => c.is_active && c.verified_at),
      }));
      const repairs: Repair[] = [];
      let compared = 0;
      for (const p of WEB_PROVIDERS.filter((k) => kinds.includes(k))) {
        const adapter = adapters[p];
        const mine = connections.filter((c) => c.provider === p);
        const conn = mine.find((c) => c.is_default) ?? mine[0];
        if (!conn || !adapter.getSubscription || !adapter.listSubscriptions) continue;
        const modes: Mode[] = [
          ...(conn.has_live_credential ? ['live' as const] : []),
          ...(conn.has_test_credential ? ['test' as const] : []),
        ];
        for (const mode of modes) {
          const ctx = await contextFor(input.tenantId, conn, mode, opts.contexts);
          const heldHere = held.filter((h) => h.provider === p && h.mode === mode);
          const found = new Map<string, SubscriptionSnapshot>();
          for (const h of heldHere) {
            const snap = await provider(p, ctx, () => adapter.getSubscription!(ctx, h.external_id));
            if (snap) found.set(snap.subscription_id, snap);
            heartbeat();
          }
          let cursor: string | null = null;
          for (let page = 0; opts.discover && page < DISCOVERY_PAGES; page++) {
            const got = await provider(p, ctx, () => adapter.listSubscriptions!(ctx, cursor, 100));
            for (const s of got.snapshots) if (s.app_user_id === input.appUserId) found.set(s.subscription_id, s);
            heartbeat();
            cursor = got.next;
            if (!cursor) break;
          }
          const readAt = new Date().toISOString();
          for (const snap of found.values()) {
            // A subscription the provider names for another app user is not this customer's to repair.
            if (snap.app_user_id && snap.app_user_id !== input.appUserId) continue;
            compared++;
            const h = heldHere.find((x) => x.external_id === snap.subscription_id);
            const heldState: HeldState | null = h
              ? {
                  status: h.status,
                  current_period_end: h.current_period_end ? new Date(h.current_period_end).toISOString() : null,
                }
              : null;
            if (!differs(heldState, snap)) continue;
            const events = snapshotEvents(
              { ...snap, app_user_id: snap.app_user_id ?? input.appUserId },
              readAt,
              'reconciliation',
            );
            await deps.handOverLifecycle(
              { tenantId: input.tenantId, provider: p, customerKey: snap.customer_id ?? snap.subscription_id },
              events,
            );
            const providerState = {
              status: snap.status,
              current_period_end: snap.current_period_end ?? null,
              cancel_at: snap.cancel_at ?? null,
            };
            const applied = events.map((e) => ({ id: e.id, kind: e.kind }));
            const row = await withTenant(db, input.tenantId, (trx) =>
              recordRepair(trx, {
                tenantId: input.tenantId,
                runId: input.runId,
                workflowId: input.workflowId ?? null,
                provider: p,
                subscriptionId: snap.subscription_id,
                appUserId: input.appUserId,
                held: heldState,
                providerState,
                applied,
              }),
            );
            reconciliationRepairs.inc({ provider: p });
            repairs.push({
              id: row.id,
              provider: p,
              subscription_id: snap.subscription_id,
              held: heldState,
              provider_state: providerState,
              applied,
              created_at: new Date(row.created_at).toISOString(),
            });
          }
        }
      }
      // The stores: each held purchase re-read with the store's server API (no list to search).
      const stores = await reconcileCustomerStores(input, kinds);
      return {
        compared: compared + stores.compared,
        repairs: [...repairs, ...stores.repairs],
        skipped: stores.skipped,
      };
    },
  };
}

export function createReconciliationActivities(deps: ActivityDeps) {
  const { reconcileCustomer } = createCustomerReconciler(deps);
  const inTenantTurn = createWorkTurns(deps);
  return {
    /**
     * The on-demand refresh of one customer (docs/reconciliation.md): every provider, with
     * discovery, in one of its tenant's turns of the worker (domain/import-concurrency.ts).
     */
    async refreshCustomer(input: {
      tenantId: string;
      runId: string;
      appUserId: string;
    }): Promise<RefreshOutcome | Parked> {
      return inTenantTurn(input.tenantId, () =>
        reconcileCustomer(input, [...WEB_PROVIDERS, ...STORE_PROVIDERS], { discover: true }),
      );
    },
  };
}
