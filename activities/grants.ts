import { ApplicationFailure } from '@temporalio/common';
import { expireDueGrant } from '../db/grants';
import { withTenant } from '../db/tenant-tx';
import type { ActivityDeps } from './deps';

export function createGrantActivities({ db }: ActivityDeps) {
  return {
    /**
     * A grant's timer fired (workflows/grant-expiry.ts): end it, as its tenant. Idempotent: a grant
     * already ended (revoked meanwhile) or gone is left alone. When the database's clock is still
     * short of the end, the activity fails retryably and runs again shortly.
     */
    async expireGrant(input: { tenantId: string; grantId: string }): Promise<'expired' | 'already_ended' | 'missing'> {
      const outcome = await withTenant(db, input.tenantId, (trx) => expireDueGrant(trx, input.tenantId, input.grantId));
      if (outcome === 'not_due') throw ApplicationFailure.retryable('the grant is not due yet by the database clock');
      return outcome;
    },
  };
}
