import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleSpec,
} from '@temporalio/client';
import type { Knex } from 'knex';
import { listConnectionsSafe } from '../db/connections';
import { provenProvidersOfAllTenants, reconciliationSettings } from '../db/reconciliation-settings';
import { withTenant } from '../db/tenant-tx';
import {
  GROUP_PROVIDERS,
  RECONCILIATION_GROUPS,
  intervalOf,
  offsetMinutes,
  reconciliationScheduleId,
  type ReconciliationGroup,
  type ReconciliationSettings,
} from '../domain/reconciliation-schedule';
import { reconciliationRunWorkflow } from '../workflows/reconciliation-run';
import { runAttributes } from '../workflows/search-attributes';

/**
 * The reconciliation Schedules (docs/reconciliation.md, "Scheduled"): per tenant
 * `reconcile-<tenant>-web` and `reconcile-<tenant>-stores`, Temporal Schedules (visible in the
 * Temporal UI under Schedules), each starting `reconciliationRunWorkflow` every interval the
 * tenant set. Ensured (created, or updated to the tenant's settings) at process start for every
 * tenant with a proven connection, when a connection is proven, and when the settings change;
 * every ensure is idempotent. A group without a proven connection has no schedule (one left from
 * a connection since removed is deleted); a tenant that turned the runs off keeps its schedules,
 * paused, with a note saying so.
 */

export type EnsureOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'none';

// Durations in milliseconds.
const minutes = (m: number) => m * 60_000;

function specOf(tenantId: string, interval: number, startAt: Date | undefined): ScheduleSpec {
  return {
    // Spread over the interval by the tenant's id, so tenants do not all start at the top of the hour.
    intervals: [{ every: minutes(interval), offset: minutes(offsetMinutes(tenantId, interval)) }],
    startAt,
  };
}

function actionOf(
  tenantId: string,
  group: ReconciliationGroup,
  taskQueue: string,
): ScheduleOptionsStartWorkflowAction<typeof reconciliationRunWorkflow> {
  return {
    type: 'startWorkflow',
    workflowType: reconciliationRunWorkflow,
    // No arguments: they would be encrypted bound to the schedule's id, and each run's id is the
    // schedule's id plus its time; the run reads its tenant and group from its own id.
    args: [],
    taskQueue,
    workflowId: reconciliationScheduleId(tenantId, group),
    typedSearchAttributes: runAttributes('reconciliation', tenantId),
  };
}

const policiesOf = (interval: number) => ({
  // A run still going when the next is due: the next is skipped, never two at once.
  overlap: ScheduleOverlapPolicy.SKIP,
  // After an outage, only a run missed within the last interval is still taken (with SKIP: one).
  catchupWindow: minutes(interval),
  pauseOnFailure: false,
});

const noteOf = (enabled: boolean) =>
  enabled ? 'reconciliation of provider state' : 'paused: the tenant turned scheduled reconciliation off';

/** Whether a schedule already says what the settings say (every process start ensures; most find nothing to do). */
function matches(d: ScheduleDescription, tenantId: string, taskQueue: string, interval: number, enabled: boolean) {
  const every = d.spec.intervals?.[0];
  return (
    d.spec.intervals?.length === 1 &&
    every?.every === minutes(interval) &&
    (every.offset ?? 0) === minutes(offsetMinutes(tenantId, interval)) &&
    d.action.type === 'startWorkflow' &&
    d.action.workflowType === reconciliationRunWorkflow.name &&
    d.action.taskQueue === taskQueue &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP &&
    d.policies.catchupWindow === minutes(interval) &&
    d.state.paused === !enabled
  );
}

/**
 * One group's schedule made to match `desired` (null: the group has no proven connection, so no
 * schedule). A new schedule's first run comes one interval after it is made (`startAt`), so a
 * connection proven or a process started never starts a burst of runs; an update keeps that start.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  taskQueue: string,
  tenantId: string,
  group: ReconciliationGroup,
  desired: ReconciliationSettings | null,
): Promise<EnsureOutcome> {
  const scheduleId = reconciliationScheduleId(tenantId, group);
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });
  if (!desired) {
    if (!current) return 'none';
    try {
      await handle.delete();
      return 'deleted';
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return 'none';
      throw err;
    }
  }
  const interval = intervalOf(desired, group);
  const action = actionOf(tenantId, group, taskQueue);
  const state = { paused: !desired.enabled, note: noteOf(desired.enabled) };
  if (current && matches(current, tenantId, taskQueue, interval, desired.enabled)) return 'unchanged';
  if (!current) {
    try {
      await client.schedule.create({
        scheduleId,
        spec: specOf(tenantId, interval, new Date(Date.now() + interval * 60_000)),
        action,
        policies: policiesOf(interval),
        state,
        typedSearchAttributes: runAttributes('reconciliation', tenantId),
      });
      return 'created';
    } catch (err) {
      // Another process made it meanwhile: bring it to these settings like any other.
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
  }
  await handle.update((prev) => ({
    spec: specOf(tenantId, interval, prev.spec.startAt),
    action,
    policies: policiesOf(interval),
    state,
  }));
  return 'updated';
}

/** Both of a tenant's schedules, from its settings and its proven connections (read in its own transaction). */
export async function ensureTenantReconciliationSchedules(
  client: Client,
  taskQueue: string,
  db: Knex,
  tenantId: string,
  proven?: ReadonlySet<string>,
): Promise<Record<ReconciliationGroup, EnsureOutcome>> {
  const { settings, providers } = await withTenant(db, tenantId, async (trx) => ({
    settings: await reconciliationSettings(trx),
    providers:
      proven ??
      new Set((await listConnectionsSafe(trx)).filter((c) => c.is_active && c.verified_at).map((c) => c.provider)),
  }));
  const out = {} as Record<ReconciliationGroup, EnsureOutcome>;
  for (const group of RECONCILIATION_GROUPS) {
    const has = GROUP_PROVIDERS[group].some((p) => providers.has(p));
    out[group] = await ensureReconciliationSchedule(client, taskQueue, tenantId, group, has ? settings : null);
  }
  return out;
}

/** Started with the api process: every tenant with a proven connection gets its schedules. Answers how many tenants. */
export async function ensureAllReconciliationSchedules(client: Client, taskQueue: string, db: Knex): Promise<number> {
  const tenants = await provenProvidersOfAllTenants(db);
  for (const [tenantId, providers] of tenants)
    await ensureTenantReconciliationSchedules(client, taskQueue, db, tenantId, providers);
  return tenants.size;
}
