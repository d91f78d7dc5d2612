import { findHeldChange, settleHeldChange } from '../db/held-changes';
import { withTenant } from '../db/tenant-tx';
import type { ActivityDeps } from './deps';

/** The expiry of a held change (workflows/change-approval.ts): it closes the change if nobody decided first. */
export function createHeldChangeActivities(deps: Pick<ActivityDeps, 'db'>) {
  return {
    /** Pending → expired, once; a change a person decided meanwhile keeps its decision. Answers the final status. */
    async expireHeldChange(input: { tenantId: string; changeId: string }): Promise<{ status: string }> {
      return withTenant(deps.db, input.tenantId, async (trx) => {
        await settleHeldChange(trx, input.changeId, 'expired', {
          outcome: { detail: 'Nobody approved it in time; nothing was written.' },
        });
        return { status: (await findHeldChange(trx, input.changeId))?.status ?? 'expired' };
      });
    },
  };
}
