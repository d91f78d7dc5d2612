import {
  ApplicationFailure,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PAGES_PER_RUN, parseRunWorkflowId, type ReconciliationGroup } from '../domain/reconciliation-schedule';
import { TENANT_ATTR } from './search-attributes';
import { inTurn } from './work-turn';

/**
 * A page compares up to CUSTOMERS_PER_PAGE customers, heartbeating after each (and resuming
 * after the last one done when it runs again), so a worker that dies mid-page is noticed within
 * the heartbeat timeout. A provider that keeps failing fails the run after the attempts; the
 * next scheduled run starts over.
 */
const { reconcileCandidatePage } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Where a run stands; carried across continue-as-new (ids and counts only). */
export interface ReconciliationRunInput {
  tenantId: string;
  group: ReconciliationGroup;
  /** The repairs' run id: this run's first Temporal run id (a uuid), kept across continue-as-new. */
  runId: string;
  /** The run's start: every page judges the candidate windows from it. */
  asOf: string;
  /** The keyset cursor of the next page (a subscription id); null: the first page. */
  after: string | null;
  progress: ReconciliationProgress;
}

export interface ReconciliationProgress {
  run_id: string;
  group: ReconciliationGroup;
  pages: number;
  /** Customers whose subscriptions could have changed, compared so far. */
  customers: number;
  /** Subscriptions compared with their provider. */
  compared: number;
  repaired: number;
  done: boolean;
}

export const reconciliationProgressQuery = defineQuery<ReconciliationProgress>('progress');

/**
 * `reconcile-<tenant>-<web|stores>-<scheduled time>`: one scheduled reconciliation of a tenant
 * (docs/reconciliation.md, "Scheduled"), started by the tenant's Schedule with no arguments (its
 * tenant and group are in its id, and its tenant search attribute must agree). Page by page, the
 * candidate customers are compared with their providers by the same per-customer comparison the
 * refresh runs; repairs are recorded under this run's id. Progress is the `progress` query.
 */
export async function reconciliationRunWorkflow(given?: ReconciliationRunInput): Promise<ReconciliationProgress> {
  const input = given ?? firstInput();
  const progress = input.progress;
  setHandler(reconciliationProgressQuery, () => progress);
  let after = input.after;
  for (let page = 0; ; page++) {
    if (page >= PAGES_PER_RUN || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof reconciliationRunWorkflow>({ ...input, after, progress });
    // In one of its tenant's turns of the worker (domain/import-concurrency.ts), waiting for one on a timer.
    const r = await inTurn(() =>
      reconcileCandidatePage({
        tenantId: input.tenantId,
        group: input.group,
        runId: input.runId,
        workflowId: workflowInfo().workflowId,
        asOf: input.asOf,
        after,
      }),
    );
    progress.pages++;
    progress.customers += r.customers;
    progress.compared += r.compared;
    progress.repaired += r.repaired;
    if (!r.next) break;
    after = r.next;
  }
  progress.done = true;
  return progress;
}

/** A run the Schedule started: its tenant and group from its id, checked against its tenant attribute. */
function firstInput(): ReconciliationRunInput {
  const info = workflowInfo();
  const parsed = parseRunWorkflowId(info.workflowId);
  const attr = info.typedSearchAttributes.get(TENANT_ATTR);
  if (!parsed || attr !== parsed.tenantId)
    throw ApplicationFailure.nonRetryable(
      'a reconciliation run needs a workflow id reconcile-<tenant>-<web|stores>-… and the same tenant attribute',
      'InvalidReconciliationRun',
    );
  return {
    tenantId: parsed.tenantId,
    group: parsed.group,
    runId: info.runId,
    asOf: new Date().toISOString(),
    after: null,
    progress: {
      run_id: info.runId,
      group: parsed.group,
      pages: 0,
      customers: 0,
      compared: 0,
      repaired: 0,
      done: false,
    },
  };
}
