import { Context } from '@temporalio/activity';
import { withTenant } from '../db/tenant-tx';
import { releaseWorkTurn, takeWorkTurn } from '../db/work-leases';
import { WORK_LEASE_MS, WORK_PARK_MS, WORK_TURNS_PER_TENANT, type Parked } from '../domain/import-concurrency';
import type { ActivityDeps } from './deps';

/**
 * Runs an import or reconciliation page in one of its tenant's turns (domain/import-concurrency.ts),
 * or answers `parked` at once, holding no slot, when the tenant's turns are all taken. The turn
 * is renewed while the page heartbeats and given back when it ends. Its holder is the activity
 * (workflow id, which names the tenant, and activity id), so a retried attempt keeps its turn.
 */
export function createWorkTurns({ db }: Pick<ActivityDeps, 'db'>) {
  return async function inTenantTurn<T>(tenantId: string, work: () => Promise<T>): Promise<T | Parked> {
    const info = Context.current().info;
    const holder = `${info.workflowExecution?.workflowId ?? tenantId}:${info.activityId}`;
    const take = () =>
      withTenant(db, tenantId, (trx) =>
        takeWorkTurn(trx, tenantId, holder, { cap: WORK_TURNS_PER_TENANT, leaseMs: WORK_LEASE_MS }),
      );
    if (!(await take())) return { parkedMs: WORK_PARK_MS };
    // Renewed at a third of the lease, so a live page never loses its turn.
    const renew = setInterval(() => void take().catch(() => {}), WORK_LEASE_MS / 3);
    try {
      return await work();
    } finally {
      clearInterval(renew);
      await withTenant(db, tenantId, (trx) => releaseWorkTurn(trx, holder)).catch(() => {});
    }
  };
}
