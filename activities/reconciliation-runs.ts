import { Context, heartbeat } from '@temporalio/activity';
import { candidateCustomerPage } from '../db/reconciliation-candidates';
import { reconciliationSettings } from '../db/reconciliation-settings';
import { withTenant } from '../db/tenant-tx';
import { CUSTOMERS_PER_PAGE, GROUP_PROVIDERS, type ReconciliationGroup } from '../domain/reconciliation-schedule';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './deps';
import { createWorkTurns } from './work-turns';
import type { Parked } from '../domain/import-concurrency';
import { createCustomerReconciler } from './reconciliation';

export interface CandidatePageInput {
  tenantId: string;
  group: ReconciliationGroup;
  runId: string;
  workflowId: string;
  asOf: string;
  /** The keyset cursor (a subscription id), never an app user: the history carries ids only. */
  after: string | null;
}

export interface CandidatePageOutcome {
  customers: number;
  compared: number;
  repaired: number;
  /** The next page's cursor; null: the run is done (or the tenant turned the runs off). */
  next: string | null;
}

/** The scheduled run's work (workflows/reconciliation-run.ts), and the schedules' ensure after a proof. */
export function createReconciliationRunActivities(deps: ActivityDeps) {
  const { reconcileCustomer } = createCustomerReconciler(deps);
  const inTenantTurn = createWorkTurns(deps);
  return {
    /**
     * One page of a scheduled run: the tenant's candidate customers (db/reconciliation-candidates.ts,
     * read in the tenant's own transaction, so no other tenant's row is ever seen), each compared
     * by the refresh's per-customer comparison at the group's provider kinds, with no list
     * discovery. Heartbeats the customers done, so a retried page resumes after them. A tenant that
     * turned the runs off ends the run at its next page.
     */
    async reconcileCandidatePage(input: CandidatePageInput): Promise<CandidatePageOutcome | Parked> {
      // In one of its tenant's turns of the worker (domain/import-concurrency.ts).
      return inTenantTurn(input.tenantId, () => candidatePage(input));
    },

    /** After a proof (workflows/probe-providers.ts): the tenant's schedules, ensured with the worker's client. */
    async ensureReconciliationSchedules(input: { tenantId: string }): Promise<void> {
      if (!deps.ensureReconciliationSchedules) throw new Error('ensuring schedules needs the worker’s client');
      await deps.ensureReconciliationSchedules(input.tenantId);
    },
  };

  async function candidatePage(input: CandidatePageInput): Promise<CandidatePageOutcome> {
    {
      const { settings, page } = await withTenant(deps.db, input.tenantId, async (trx) => ({
        settings: await reconciliationSettings(trx),
        page: await candidateCustomerPage(trx, {
          providers: GROUP_PROVIDERS[input.group],
          asOf: input.asOf,
          after: input.after,
          limit: CUSTOMERS_PER_PAGE,
        }),
      }));
      if (!settings.enabled) return { customers: 0, compared: 0, repaired: 0, next: null };
      const resumed = Number(Context.current().info.heartbeatDetails ?? 0) || 0;
      const contexts = new Map<string, ProviderContext>();
      let compared = 0;
      let repaired = 0;
      for (let i = resumed; i < page.appUserIds.length; i++) {
        const r = await reconcileCustomer(
          { tenantId: input.tenantId, runId: input.runId, appUserId: page.appUserIds[i], workflowId: input.workflowId },
          GROUP_PROVIDERS[input.group],
          { discover: false, contexts },
        );
        compared += r.compared;
        repaired += r.repairs.length;
        heartbeat(i + 1);
      }
      return { customers: page.appUserIds.length - resumed, compared, repaired, next: page.next };
    }
  }
}
