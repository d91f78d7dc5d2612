import { markLifecycleDeliveriesProcessed } from '../db/webhook-deliveries';
import { upsertEntitlement } from '../db/entitlements';
import { upsertLifecycleSubscription } from '../db/subscriptions';
import { withTenant } from '../db/tenant-tx';
import { quietOutbound } from '../db/imports';
import type { EntitlementView } from '../domain/entitlement';
import type { SubscriptionView } from '../domain/subscription';
import type { ActivityDeps } from './deps';
import { entitlementWrites, receiptToPremium, transfersCounter } from '../runtime/metrics';
import type { ClaimedTransfer } from './store-purchases';
import { applyRelinkPolicy, type RelinkResult } from './web-relink';
import { inSpan } from '../runtime/tracing';

export function createLifecycleActivities({ db }: ActivityDeps) {
  return {
    /**
     * Write what the lifecycle derived, in one tenant transaction: the subscription records,
     * the entitlement of each one's app user, and the deliveries marked processed. Idempotent:
     * the same input writes the same rows. The buyer's email never travels through the
     * workflow: it is read here from the delivery of the event that named it last. Two round
     * trips per subscription (the upsert, the entitlement; a provider's first sandbox row adds
     * readiness' look, a record whose events now name another app user the restore policy's:
     * activities/web-relink.ts); the deliveries are marked in the last subscription's upsert.
     * Answers the transfers a re-link made, whose workflows the lifecycle starts.
     */
    async writeLifecycle(input: {
      tenantId: string;
      provider: string;
      subscriptions: SubscriptionView[];
      entitlements: EntitlementView[];
      eventIds: string[];
      /** Every event of the batch came from an import: no outbound entitlement event (docs/reconciliation.md). */
      quiet?: boolean;
    }): Promise<{ transfers: ClaimedTransfer[] }> {
      const { tenantId, provider } = input;
      // The span the webhook's trace ends with (when tracing is on); ids only.
      // Seconds from each delivery's receipt to this write (the database's clock), observed once it commits.
      const relinks: RelinkResult[] = [];
      const lags = await inSpan(
        'entitlement.write',
        { 'billing.provider': provider, 'billing.entitlements': input.entitlements.length },
        () =>
          withTenant(db, tenantId, async (trx) => {
            if (input.quiet) await quietOutbound(trx);
            const batch = new Set(input.eventIds);
            const subscriptionOf = new Map<string, string>();
            let lags: number[] | undefined;
            relinks.length = 0; // a retried transaction starts over
            for (const [i, s] of input.subscriptions.entries()) {
              // Every event of a subscription this batch speaks of: an event naming only the customer (a payment
              // intent) belongs to no subscription until one is seen, maybe in a later batch. Linked rows are skipped.
              const linked = s.event_ids.some((e) => batch.has(e));
              // The last subscription's upsert also marks the batch's deliveries, its own events naming it.
              const deliveries =
                i === input.subscriptions.length - 1
                  ? { eventIds: input.eventIds, subscriptionOf, ofWritten: linked ? s.event_ids : [] }
                  : undefined;
              const row = await upsertLifecycleSubscription(trx, tenantId, provider, s, deliveries);
              if (linked) for (const e of s.event_ids) subscriptionOf.set(e, row.id);
              lags = row.lags ?? lags;
              // The record names another app user than the events: a re-link, which the restore policy decides
              // (docs/transfers.md); the entitlement is written for whom it says.
              let owner = s.app_user_id;
              if (row.app_user_id !== null && owner !== null && row.app_user_id !== owner) {
                const relink = await applyRelinkPolicy(trx, tenantId, provider, s, row.app_user_id);
                relinks.push(relink);
                owner = relink.appUserId;
              }
              const ent = input.entitlements[i];
              await upsertEntitlement(trx, {
                tenantId,
                provider,
                productId: row.product_id,
                subscriptionId: row.id,
                state: ent.state,
                isSandbox: s.mode === 'test',
                expiresAt: ent.expires_at,
                graceUntil: ent.grace_until,
                // The SDK asks by app user; a purchase made without one is held under the customer's email or id.
                appUserId: owner ?? row.app_user_id ?? row.email ?? s.customer_id ?? s.external_id,
              });
            }
            return lags ?? markLifecycleDeliveriesProcessed(trx, provider, input.eventIds, subscriptionOf);
          }),
      );
      // Counted once committed (a retried activity counts again: the metric is a rate, not a ledger).
      for (const ent of input.entitlements.slice(0, input.subscriptions.length))
        entitlementWrites.inc({ provider, state: ent.state });
      // An import's batch was not received from a provider now: no receipt lag to speak of.
      if (!input.quiet) for (const lag of lags) receiptToPremium.observe({ provider, source: 'authoritative' }, lag);
      for (const r of relinks) if (r.counted) transfersCounter.inc(r.counted);
      return { transfers: relinks.flatMap((r) => (r.transfer ? [r.transfer] : [])) };
    },
  };
}
