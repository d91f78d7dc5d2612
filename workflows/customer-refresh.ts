import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RefreshOutcome } from '../activities/reconciliation';
import { inTurn } from './work-turn';

/**
 * One activity re-reads the providers and hands differences to the customer's lifecycle
 * workflow. Few attempts: support waits for the answer, and a retried read of the same state
 * finds nothing left to repair.
 */
const { refreshCustomer } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export interface CustomerRefreshInput {
  tenantId: string;
  runId: string;
  /** The app user id (the tenant's own identifier of its customer, no personal data). */
  appUserId: string;
}

/**
 * `refresh-<tenant>-<run>`: the on-demand reconciliation of one customer (docs/reconciliation.md),
 * a short workflow so the repair runs where the lifecycle hand-over lives and is visible in the
 * Temporal UI with the tenant's search attributes.
 */
export async function customerRefreshWorkflow(input: CustomerRefreshInput): Promise<RefreshOutcome> {
  // In one of its tenant's turns of the worker (domain/import-concurrency.ts), waiting for one on a timer.
  return inTurn(() => refreshCustomer(input));
}
