import { withTenant } from '../db/tenant-tx';
import type { EntitlementView } from '../domain/entitlement';
import type { SubscriptionView } from '../domain/subscription';
import type { ActivityDeps } from './index';

const NO_PRODUCT = '00000000-0000-0000-0000-000000000000';

export function createLifecycleActivities({ db }: ActivityDeps) {
  return {
    /**
     * Write what the lifecycle derived, in one tenant transaction: the subscription records,
     * the entitlement of each one's app user, and the deliveries marked processed. Idempotent:
     * the same input writes the same rows.
     */
    async writeLifecycle(input: { tenantId: string; provider: string; subscriptions: SubscriptionView[]; entitlements: EntitlementView[]; eventIds: string[] }): Promise<void> {
      const { tenantId, provider } = input;
      await withTenant(db, tenantId, async (trx) => {
        for (const [i, s] of input.subscriptions.entries()) {
          const product = s.sku ? await trx('products').where({ sku: s.sku }).first('id') : undefined;
          const [row] = await trx('subscriptions')
            .insert({
              tenant_id: tenantId, provider, external_id: s.external_id, customer_external_id: s.customer_id, status: s.status, mode: s.mode,
              email: s.email, app_user_id: s.app_user_id, product_id: product?.id ?? null, trial_started_at: s.trial_started_at,
              trial_ended_at: s.trial_ended_at, current_period_end: s.current_period_end, canceled_at: s.canceled_at,
            })
            .onConflict(['tenant_id', 'provider', 'external_id'])
            .merge(['customer_external_id', 'status', 'mode', 'email', 'app_user_id', 'product_id', 'trial_started_at', 'trial_ended_at', 'current_period_end', 'canceled_at'])
            .returning('id');
          await trx('subscriptions').where({ id: row.id }).update({ updated_at: trx.fn.now() });
          const ent = input.entitlements[i];
          // The SDK asks by app user; a purchase made without one is held under the customer's email or id.
          const appUser = s.app_user_id ?? s.email ?? s.customer_id ?? s.external_id;
          await trx.raw(
            `insert into entitlements (tenant_id, app_user_id, provider, product_id, subscription_id, state, is_sandbox, expires_at, grace_until)
             values (?, ?, ?, ?, ?, ?, ?, ?, ?)
             on conflict (tenant_id, app_user_id, provider, coalesce(product_id, '${NO_PRODUCT}'::uuid))
             do update set subscription_id = excluded.subscription_id, state = excluded.state, is_sandbox = excluded.is_sandbox,
               expires_at = excluded.expires_at, grace_until = excluded.grace_until, updated_at = now()`,
            [tenantId, appUser, provider, product?.id ?? null, row.id, ent.state, s.mode === 'test', ent.expires_at, ent.grace_until],
          );
        }
        if (input.eventIds.length) {
          await trx('webhook_deliveries').where({ provider }).whereIn('event_id', input.eventIds).where({ status: 'received' })
            .update({ status: 'processed', processed_at: trx.fn.now(), updated_at: trx.fn.now() });
        }
      });
    },
  };
}
