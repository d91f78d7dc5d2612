import { foldChartSums } from '../db/chart-fold';
import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import type { ActivityDeps } from '../activities/deps';
import { createLifecycleActivities } from '../activities/lifecycle';
import { createStorePurchaseActivities } from '../activities/store-purchases';
import { entitlementFor } from '../domain/entitlement';
import { applyEvent, deriveSubscriptions, type LifecycleState } from '../domain/subscription';
import { demoHistoryDone, demoHistoryStarted } from '../db/demo-facts';
import { recordOperatorAudit } from '../db/audit';
import { withTenant } from '../db/tenant-tx';
import { demoHistory, type DemoStoreBuyer, type DemoWebBuyer } from '../seed/demo-history-data';

/** The audit entry that marks the history made. */
export const DEMO_HISTORY_ACTION = 'demo.history_generated';
const ACTION = DEMO_HISTORY_ACTION;

/**
 * The demo tenant's year of history (seed/demo-history-data.ts), written once, through the
 * rules and the writes every provider event goes through, never by inserting rows:
 *
 * - a web buyer's events are applied one at a time, in the order the provider sent them, with
 *   the lifecycle workflow's own step (`applyEvent`, `deriveSubscriptions`, `entitlementFor` at
 *   the event's time) and written by the lifecycle's local activity (`writeLifecycle`), exactly
 *   what workflows/customer-lifecycle.ts does for one event per hand-over;
 * - a store buyer's answers go through the store purchase write (`reconcileStorePurchase`),
 *   as a store notification's read does.
 *
 * Each write is stamped with the event's own time (the history rows are dated at the provider's
 * time: the schema), so the charts show a year. Like an import, the writes send no outbound
 * webhook. Not through Temporal: a year of hand-overs one event at a time would take minutes,
 * and the workflow's step is pure, so running it here writes the same rows. Made once (an audit
 * entry marks it); a start interrupted midway finishes the buyers not yet written. Never in
 * production.
 */
export async function ensureDemoHistory(
  db: Knex,
  config: Config,
  tenantId: string,
  opts: { say: (m: string) => void; signal?: AbortSignal; now?: number; buyers?: number },
): Promise<'made' | 'present' | 'skipped'> {
  if (config.env === 'production') return 'skipped';
  if (await withTenant(db, tenantId, (trx) => demoHistoryDone(trx, ACTION))) return 'present';
  // Only the store write uses the store adapters and the vault for calls it does not make here.
  const deps = { db, config } as ActivityDeps;
  const { writeLifecycle } = createLifecycleActivities(deps);
  const { reconcileStorePurchase } = createStorePurchaseActivities(deps);
  const buyers = demoHistory({ now: opts.now ?? Date.now(), ...(opts.buyers ? { buyers: opts.buyers } : {}) });
  const written = await withTenant(db, tenantId, (trx) => demoHistoryStarted(trx));
  let done = 0;
  let writes = 0;
  for (const buyer of buyers) {
    if (opts.signal?.aborted) return 'skipped';
    const key = buyer.kind === 'web' ? buyer.events[0]?.subscription_id : buyer.reads[0]?.read.purchase_key;
    if (key && !written.has(key)) {
      writes += buyer.kind === 'web' ? await writeWebBuyer(buyer) : await writeStoreBuyer(buyer);
    }
    if (++done % 50 === 0) opts.say(`Demo history: ${done} of ${buyers.length} buyers (${writes} events)`);
  }
  // Charts read the sums the worker folds once a minute: fold the demo tenant now, so the first
  // visit after the banner's "written" line sees the whole year, not the part a pass caught.
  // null: the worker's own pass holds the tenant; its snapshot may predate the last writes.
  for (let tries = 0; (await foldChartSums(db, tenantId)) === null && tries < 100; tries++)
    await new Promise((r) => setTimeout(r, 100));
  await recordOperatorAudit(db, { tenantId, action: ACTION, detail: { buyers: buyers.length, events: writes } });
  return 'made';

  async function writeWebBuyer(buyer: DemoWebBuyer): Promise<number> {
    let state: LifecycleState = { events: [] };
    for (const e of buyer.events) {
      state = applyEvent(state, e).state;
      const subscriptions = deriveSubscriptions(state.events);
      await writeLifecycle({
        tenantId,
        provider: buyer.provider,
        subscriptions,
        entitlements: subscriptions.map((s) => entitlementFor(s, e.occurred_at)),
        eventIds: [e.id],
        quiet: true,
      });
    }
    // What the workflow's timer would have settled since the last event (a paid period run out).
    const subscriptions = deriveSubscriptions(state.events);
    const now = new Date(opts.now ?? Date.now()).toISOString();
    await writeLifecycle({
      tenantId,
      provider: buyer.provider,
      subscriptions,
      entitlements: subscriptions.map((s) => entitlementFor(s, now)),
      eventIds: [],
      quiet: true,
    });
    return buyer.events.length;
  }

  async function writeStoreBuyer(buyer: DemoStoreBuyer): Promise<number> {
    for (const { read, hint } of buyer.reads)
      await reconcileStorePurchase({
        tenantId,
        provider: buyer.provider,
        read,
        owner: buyer.appUserId,
        hint,
        eventIds: [],
        quiet: true,
      });
    return buyer.reads.length;
  }
}
