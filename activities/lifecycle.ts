import { productIdForPurchase, upsertEntitlement } from '../db/entitlements';
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
     * workflow: it is read here from the delivery of the event that named it last.
     */
    async writeLifecycle(input: { tenantId: string; provider: string; subscriptions: SubscriptionView[]; entitlements: EntitlementView[]; eventIds: string[] }): Promise<void> {
      const { tenantId, provider } = input;
      await withTenant(db, tenantId, async (trx) => {
        const emailEvents = input.subscriptions.map((s) => s.email_event_id).filter((id): id is string => !!id);
        const emails = new Map<string, string>(
          emailEvents.length
            ? (await trx('webhook_deliveries').where({ provider }).whereIn('event_id', emailEvents).whereNotNull('buyer_email').select('event_id', 'buyer_email'))
                .map((r: { event_id: string; buyer_email: string }) => [r.event_id, r.buyer_email])
            : [],
        );
        for (const [i, s] of input.subscriptions.entries()) {
          const email = s.email ?? (s.email_event_id ? emails.get(s.email_event_id) ?? null : null);
          const productId = await productIdForPurchase(trx, provider, s.sku);
          const [row] = await trx('subscriptions')
            .insert({
              tenant_id: tenantId, provider, external_id: s.external_id, customer_external_id: s.customer_id, status: s.status, mode: s.mode,
              email, app_user_id: s.app_user_id, product_id: productId, trial_started_at: s.trial_started_at,
              trial_ended_at: s.trial_ended_at, current_period_end: s.current_period_end, canceled_at: s.canceled_at, updated_at: trx.fn.now(),
            })
            .onConflict(['tenant_id', 'provider', 'external_id'])
            .merge(['customer_external_id', 'status', 'mode', 'email', 'app_user_id', 'product_id', 'trial_started_at', 'trial_ended_at', 'current_period_end', 'canceled_at', 'updated_at'])
            .returning('id');
          const ent = input.entitlements[i];
          await upsertEntitlement(trx, {
            tenantId, provider, productId, subscriptionId: row.id, state: ent.state, isSandbox: s.mode === 'test', expiresAt: ent.expires_at, graceUntil: ent.grace_until,
            // The SDK asks by app user; a purchase made without one is held under the customer's email or id.
            appUserId: s.app_user_id ?? email ?? s.customer_id ?? s.external_id,
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
