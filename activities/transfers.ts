import { ApplicationFailure } from '@temporalio/common';
import { closeUndoWindow } from '../db/transfers';
import { withTenant } from '../db/tenant-tx';
import type { ActivityDeps } from './deps';

export function createTransferActivities({ db }: ActivityDeps) {
  return {
    /**
     * A transfer's undo window ended (workflows/transfer.ts): the transfer stands, as its tenant.
     * Idempotent: a transfer undone meanwhile, or gone, is left alone. When the database's clock
     * is still short of the end, the activity fails retryably and runs again shortly.
     */
    async closeTransferUndoWindow(input: {
      tenantId: string;
      transferId: string;
    }): Promise<'closed' | 'not_completed' | 'missing'> {
      const outcome = await withTenant(db, input.tenantId, (trx) => closeUndoWindow(trx, input.transferId));
      if (outcome === 'not_due')
        throw ApplicationFailure.retryable('the undo window is still open by the database clock');
      return outcome;
    },
  };
}
