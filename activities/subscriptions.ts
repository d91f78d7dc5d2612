import { withTenant } from '../db/tenant-tx';
import type { ActivityDeps } from './index';

export function createSubscriptionActivities({ db }: ActivityDeps) {
  return {
    /**
     * Record the end of a trial. `trialEndedAt` is written once and then persists through
     * conversion and renewals (spec: trial timestamps persist).
     */
    async recordTrialEnded(input: { tenantId: string; subscriptionId: string; endedAt: string }): Promise<{ trialEndedAt: string | null }> {
      return withTenant(db, input.tenantId, async (trx) => {
        const [row] = await trx('subscriptions')
          .where({ id: input.subscriptionId })
          .update({ trial_ended_at: trx.raw('coalesce(trial_ended_at, ?)', [input.endedAt]), updated_at: trx.fn.now() })
          .returning('trial_ended_at');
        return { trialEndedAt: row ? new Date(row.trial_ended_at).toISOString() : null };
      });
    },
  };
}
