import { productIdSql, upsertEntitlement } from '../db/entitlements';
import { withTenant } from '../db/tenant-tx';
import type { EntitlementView } from '../domain/entitlement';
import type { SubscriptionView } from '../domain/subscription';
import type { ActivityDeps } from './index';

export function createLifecycleActivities({ db }: ActivityDeps) {
  return {
    /**
     * Write what the lifecycle derived, in one tenant transaction: the subscription records,
     * the entitlement of each one's app user, and the deliveries marked processed. Idempotent:
     * the same input writes the same rows. The buyer's email never travels through the
     * workflow: it is read here from the delivery of the event that named it last. Three round
     * trips per subscription at most: the upsert, the entitlement, the deliveries.
     */
    async writeLifecycle(input: { tenantId: string; provider: string; subscriptions: SubscriptionView[]; entitlements: EntitlementView[]; eventIds: string[] }): Promise<void> {
      const { tenantId, provider } = input;
      await withTenant(db, tenantId, async (trx) => {
        for (const [i, s] of input.subscriptions.entries()) {
          // One statement: the product and the buyer's email are looked up inside the upsert.
          const { rows } = await trx.raw(
            `insert into subscriptions (tenant_id, provider, external_id, customer_external_id, status, mode, email, app_user_id, product_id,
               trial_started_at, trial_ended_at, current_period_end, canceled_at, updated_at)
             values (?, ?, ?, ?, ?, ?,
               coalesce(?::text, (select buyer_email from webhook_deliveries where provider = ? and event_id = ?)),
               ?, ${productIdSql(provider)}, ?, ?, ?, ?, now())
             on conflict (tenant_id, provider, external_id) do update set
               customer_external_id = excluded.customer_external_id, status = excluded.status, mode = excluded.mode,
               -- An address once known stays until an event names another (a workflow may not hold the event that named it).
               email = coalesce(excluded.email, subscriptions.email),
               app_user_id = excluded.app_user_id, product_id = excluded.product_id, trial_started_at = excluded.trial_started_at,
               trial_ended_at = excluded.trial_ended_at, current_period_end = excluded.current_period_end, canceled_at = excluded.canceled_at,
               updated_at = now()
             returning id, product_id, email`,
            [
              tenantId, provider, s.external_id, s.customer_id, s.status, s.mode,
              s.email, provider, s.email_event_id, s.app_user_id, s.sku, s.sku,
              s.trial_started_at, s.trial_ended_at, s.current_period_end, s.canceled_at,
            ],
          );
          const row = rows[0] as { id: string; product_id: string | null; email: string | null };
          const ent = input.entitlements[i];
          await upsertEntitlement(trx, {
            tenantId, provider, productId: row.product_id, subscriptionId: row.id, state: ent.state, isSandbox: s.mode === 'test', expiresAt: ent.expires_at, graceUntil: ent.grace_until,
            // The SDK asks by app user; a purchase made without one is held under the customer's email or id.
            appUserId: s.app_user_id ?? row.email ?? s.customer_id ?? s.external_id,
          });
        }
        if (input.eventIds.length) {
          await trx('webhook_deliveries').where({ provider }).whereIn('event_id', input.eventIds).where({ status: 'received' })
            .update({ status: 'processed', processed_at: trx.fn.now(), updated_at: trx.fn.now() });
        }
      });
    },
  };
}
